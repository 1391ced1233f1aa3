/**
 * The two MACs behind an issued key, under keys derived from the edge's ID_SECRET with HKDF (one per
 * purpose, never the secret itself):
 * - the check (`frontier key check v1`): the last characters of the key, verified at the edge from
 *   the key's spelling alone;
 * - the digest (`frontier key digest v1`): HMAC-SHA256 over the key's scope, id and secret, the only
 *   form of the secret any storage holds. Without the derived key a storage dump cannot confirm a
 *   guessed key (an unkeyed SHA-256 could be), and the check is not stored at all.
 * Rotating ID_SECRET therefore invalidates every issued key (docs/operations/tenants.md).
 */
import { checkOf, formatKey, type IssuedKeyParts, type KeyScope, keyHint, newKeyId, newSecret } from "./key-format.ts";

type Purpose = "check" | "digest";

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function macKey(idSecret: string, purpose: Purpose): Promise<CryptoKey> {
  const cacheKey = `${purpose}\u0000${idSecret}`;
  let key = keys.get(cacheKey);
  if (!key) {
    if (keys.size >= 16) keys.clear();
    key = crypto.subtle
      .importKey("raw", encoder.encode(idSecret), "HKDF", false, ["deriveKey"])
      .then((base) =>
        crypto.subtle.deriveKey(
          { name: "HKDF", hash: "SHA-256", salt: encoder.encode(`frontier key ${purpose} v1`), info: new Uint8Array() },
          base,
          { name: "HMAC", hash: "SHA-256", length: 256 },
          false,
          ["sign"],
        ),
      );
    keys.set(cacheKey, key);
  }
  return key;
}

function scopeText(scope: KeyScope): string {
  return scope.kind === "api" ? `api\u0000${scope.tenant}` : "admin";
}

async function mac(idSecret: string, purpose: Purpose, text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await macKey(idSecret, purpose), encoder.encode(text)));
}

/** The check an issued key with these parts carries. */
export async function keyCheck(idSecret: string, parts: Omit<IssuedKeyParts, "check">): Promise<string> {
  return checkOf(await mac(idSecret, "check", `${scopeText(parts.scope)}\u0000${parts.keyId}\u0000${parts.secret}`));
}

/** True when the key's check is the edge's own (compared in constant time). */
export async function checkMatches(idSecret: string, parts: IssuedKeyParts): Promise<boolean> {
  return sameDigest(await keyCheck(idSecret, parts), parts.check);
}

/** The stored form of a key's secret: hex HMAC-SHA256 under the digest key. */
export async function keyDigest(idSecret: string, parts: Omit<IssuedKeyParts, "check">): Promise<string> {
  const bytes = await mac(idSecret, "digest", `${scopeText(parts.scope)}\u0000${parts.keyId}\u0000${parts.secret}`);
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Two digests (or checks) equal, compared in time independent of where they differ. */
export function sameDigest(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A freshly issued key: its value (shown once), its id, the digest to store and a redacted hint. */
export interface IssuedKey {
  value: string;
  keyId: string;
  digest: string;
  hint: string;
}

/** A new key for `scope`; with `keyId`, a new secret for that id (rotation). */
export async function issueKey(idSecret: string, scope: KeyScope, keyId = newKeyId()): Promise<IssuedKey> {
  const unchecked = { scope, keyId, secret: newSecret() };
  const parts = { ...unchecked, check: await keyCheck(idSecret, unchecked) };
  return { value: formatKey(parts), keyId, digest: await keyDigest(idSecret, unchecked), hint: keyHint(parts) };
}
