/** One JSON line per event. Never pass API keys or message content here; IDs are shortened (shared/log-ids.ts). */
import { shortenIds } from "../../shared/log-ids.ts";

export function log(event: string, fields: Record<string, string | number | boolean | undefined>): void {
  const shown = Object.fromEntries(
    Object.entries(fields).map(([key, value]) => [key, typeof value === "string" ? shortenIds(value) : value]),
  );
  console.log(JSON.stringify({ event, ...shown }));
}
