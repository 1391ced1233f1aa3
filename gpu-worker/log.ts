/** One line per event, `key=value` pairs, to stderr. Never pass secrets or prompt text here; IDs are shortened (shared/log-ids.ts). */
import { shortenIds } from "../shared/log-ids.ts";

export type LogFields = Record<string, string | number | boolean | undefined>;

export function log(message: string, fields: LogFields = {}): void {
  const parts = [new Date().toISOString(), message];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const text = shortenIds(String(value));
    parts.push(`${key}=${/\s/.test(text) ? JSON.stringify(text) : text}`);
  }
  process.stderr.write(`${parts.join(" ")}\n`);
}
