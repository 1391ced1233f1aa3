/**
 * Who is calling, from the request's headers alone (`x-api-key` or `Authorization: Bearer`), before
 * any byte of the body is read. Two kinds of key:
 * - a key issued at run time (`sk-fr-<tenant>-<key id>-…`, keys/key-format.ts): its check must be the
 *   edge's own (a key never issued is refused here, no Durable Object asked); whether it is still
 *   good (status, expiry, rotation, its tenant archived) is the tenant's authority's answer, asked on
 *   every request (admission.ts), never cached;
 * - a bootstrap key from `API_KEYS` (SHA-256 → tenant): read-only, good while it is configured.
 * The key itself is never logged or stored.
 */
import { toHex } from "../../shared/ids.ts";
import type { EdgeConfig } from "../config/config.ts";
import { ApiError } from "../core/errors.ts";
import { checkMatches, keyDigest } from "./keys/key-digest.ts";
import { parseApiKey } from "./keys/key-format.ts";

/** How the caller proved itself; the authority checks a run-time key's digest against its own. */
export type Credential = { kind: "env" } | { kind: "runtime"; digest: string };

/** Who is calling: the tenant, the key's stable id (usage records) and the credential the authority checks. */
export interface Caller {
  tenant: string;
  /** A run-time key's id (12 base32 characters), or an `API_KEYS` key's SHA-256, first 16 hex characters. */
  keyId: string;
  credential: Credential;
}

/** The caller the headers name, or a 401 (no key, a key the edge never issued, an unknown bootstrap key). */
export async function identifyCaller(
  headers: Headers,
  config: Pick<EdgeConfig, "apiKeys" | "idSecret">,
): Promise<Caller> {
  const key = presentedKey(headers);
  if (key === undefined) {
    throw new ApiError("authentication_error", "x-api-key header is required (or Authorization: Bearer <key>)");
  }
  const issued = parseApiKey(key);
  if (issued && issued.scope.kind === "api") {
    if (!(await checkMatches(config.idSecret, issued))) throw invalidKey();
    const digest = await keyDigest(config.idSecret, issued);
    return { tenant: issued.scope.tenant, keyId: issued.keyId, credential: { kind: "runtime", digest } };
  }
  const digest = await sha256Hex(key);
  const tenant = config.apiKeys.get(digest);
  if (tenant === undefined) throw invalidKey();
  return { tenant, keyId: digest.slice(0, 16), credential: { kind: "env" } };
}

export function invalidKey(): ApiError {
  return new ApiError("authentication_error", "invalid x-api-key");
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
