/** Readers for the worker's environment strings, each naming the variable in its error. */
import { DEV_MODE_FLAG } from "../../shared/dev-secrets.ts";

/** FRONTIER_DEV: "1" is local development; anything but "1", "0" or unset is refused. */
export function isDev(env: NodeJS.ProcessEnv): boolean {
  const flag = env[DEV_MODE_FLAG];
  if (flag !== undefined && flag !== "" && flag !== "1" && flag !== "0") {
    throw new Error(`${DEV_MODE_FLAG} must be "1" (local development) or unset, got "${flag}"`);
  }
  return flag === "1";
}

export function httpUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must be an http(s) URL`);
  return raw.replace(/\/+$/, "");
}

/** Seconds (fractions allowed) as whole milliseconds. */
export function msFromSeconds(env: NodeJS.ProcessEnv, name: string, fallbackSeconds: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallbackSeconds * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number of seconds, got "${raw}"`);
  return Math.round(value * 1000);
}

export function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new Error(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}
