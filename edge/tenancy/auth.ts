/**
 * API key authentication: `x-api-key` or `Authorization: Bearer` (the Gemini API reads its own
 * `x-goog-api-key` / `?key=` and hands the key to `authenticateKey`). Only SHA-256 digests of keys are
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
  return authenticateKey(presentedKey(headers), keys, ANTHROPIC_KEY_MESSAGES);
}

/** What a 401 says when the key is missing or unknown (each protocol names its own way to send one). */
export interface KeyMessages {
  missing: string;
  invalid: string;
}

const ANTHROPIC_KEY_MESSAGES: KeyMessages = {
  missing: "x-api-key header is required (or Authorization: Bearer <key>)",
  invalid: "invalid x-api-key",
};

/** The caller a presented key (however the protocol carries it) belongs to; 401 without a known one. */
export async function authenticateKey(
  key: string | undefined,
  keys: ReadonlyMap<string, string>,
  messages: KeyMessages,
): Promise<Caller> {
  if (key === undefined || key === "") throw new ApiError("authentication_error", messages.missing);
  const digest = await sha256Hex(key);
  const tenant = keys.get(digest);
  if (tenant === undefined) throw new ApiError("authentication_error", messages.invalid);
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
