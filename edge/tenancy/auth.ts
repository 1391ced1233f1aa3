/**
 * API key authentication: `x-api-key` or `Authorization: Bearer`. Only SHA-256 digests of keys are
 * configured, compared by map lookup; the key itself is never logged or stored.
 */
import { toHex } from "../../shared/ids.ts";
import { ApiError } from "../core/errors.ts";

export async function authenticate(headers: Headers, keys: ReadonlyMap<string, string>): Promise<string> {
  const key = presentedKey(headers);
  if (key === undefined) {
    throw new ApiError("authentication_error", "x-api-key header is required (or Authorization: Bearer <key>)");
  }
  const tenant = keys.get(await sha256Hex(key));
  if (tenant === undefined) throw new ApiError("authentication_error", "invalid x-api-key");
  return tenant;
}

/** A short id of the presented key for usage records: its SHA-256, first 16 hex characters. */
export async function keyIdOf(headers: Headers): Promise<string> {
  return (await sha256Hex(presentedKey(headers) ?? "")).slice(0, 16);
}

function presentedKey(headers: Headers): string | undefined {
  const apiKey = headers.get("x-api-key")?.trim();
  if (apiKey) return apiKey;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match?.[1];
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
