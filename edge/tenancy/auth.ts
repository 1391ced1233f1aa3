/**
 * API key authentication: `x-api-key` or `Authorization: Bearer`. Only SHA-256 digests of keys are
 * configured, compared by map lookup; the key itself is never logged or stored.
 */
import { toHex } from "../../shared/ids.ts";
import { ApiError } from "../core/errors.ts";

/** Who is calling: the tenant the key belongs to and the key's short id (usage records). */
export interface Caller {
  tenant: string;
  /** The presented key's SHA-256, first 16 hex characters. */
  keyId: string;
}

export async function authenticateCaller(headers: Headers, keys: ReadonlyMap<string, string>): Promise<Caller> {
  const key = presentedKey(headers);
  if (key === undefined) {
    throw new ApiError("authentication_error", "x-api-key header is required (or Authorization: Bearer <key>)");
  }
  const digest = await sha256Hex(key);
  const tenant = keys.get(digest);
  if (tenant === undefined) throw new ApiError("authentication_error", "invalid x-api-key");
  return { tenant, keyId: digest.slice(0, 16) };
}

/** The tenant of the presented key (401 without a known one). */
export async function authenticate(headers: Headers, keys: ReadonlyMap<string, string>): Promise<string> {
  return (await authenticateCaller(headers, keys)).tenant;
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
