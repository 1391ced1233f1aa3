/** Readers for the edge's configuration strings (wrangler `[vars]`), shared by every config section. */

/** A configuration value is missing or malformed: the edge answers 500 and logs which. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export function positiveInt(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new ConfigError(`${name} must be a positive integer`);
  return value;
}

export function isHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}
