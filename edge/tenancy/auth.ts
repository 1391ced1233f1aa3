/**
 * Who is calling, from the request's headers (or URL) alone, before any byte of the body is read:
 * `x-api-key` or `Authorization: Bearer` (the Gemini API reads its own `x-goog-api-key` / `?key=`
 * and hands the key to `identifyKey` with its own messages). Two kinds of key:
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
  /** What a 401 for a key its authority does not know says on the caller's protocol (else Anthropic's). */
  invalidKeyMessage?: string;
}

/** What identifying a caller needs from the config. */
export type KeyConfig = Pick<EdgeConfig, "apiKeys" | "idSecret">;

/** The caller a request names, read from its headers or URL only (never its body). */
export type CallerIdentifier = (request: Request, config: KeyConfig) => Promise<Caller>;

/** What a 401 says when the key is missing or unknown (each protocol names its own way to send one). */
export interface KeyMessages {
  missing: string;
  invalid: string;
}

const ANTHROPIC_KEY_MESSAGES: KeyMessages = {
  missing: "x-api-key header is required (or Authorization: Bearer <key>)",
  invalid: "invalid x-api-key",
};

/** The caller the headers name, or a 401 (no key, a key the edge never issued, an unknown bootstrap key). */
export function identifyCaller(headers: Headers, config: KeyConfig): Promise<Caller> {
  return identifyKey(presentedKey(headers), config, ANTHROPIC_KEY_MESSAGES);
}

/** `identifyCaller` as a `CallerIdentifier` (the Anthropic/OpenAI routes'). */
export const identifyRequestCaller: CallerIdentifier = (request, config) => identifyCaller(request.headers, config);

/** The caller a presented key (however the protocol carries it) belongs to; 401 without a known one. */
export async function identifyKey(key: string | undefined, config: KeyConfig, messages: KeyMessages): Promise<Caller> {
  if (key === undefined || key === "") throw new ApiError("authentication_error", messages.missing);
  const invalid = () => new ApiError("authentication_error", messages.invalid);
  const issued = parseApiKey(key);
  if (issued && issued.scope.kind === "api") {
    if (!(await checkMatches(config.idSecret, issued))) throw invalid();
    const digest = await keyDigest(config.idSecret, issued);
    return {
      tenant: issued.scope.tenant,
      keyId: issued.keyId,
      credential: { kind: "runtime", digest },
      invalidKeyMessage: messages.invalid,
    };
  }
  const digest = await sha256Hex(key);
  const tenant = config.apiKeys.get(digest);
  if (tenant === undefined) throw invalid();
  return { tenant, keyId: digest.slice(0, 16), credential: { kind: "env" }, invalidKeyMessage: messages.invalid };
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
