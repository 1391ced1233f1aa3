/**
 * The spelling of the keys Frontier issues at run time, and their parts:
 *
 *   API key    sk-fr-<tenant>-<key id>-<secret><check>
 *   admin key  sk-fra-<key id>-<secret><check>
 *
 * `<tenant>` names the tenant's authority (a Durable Object per tenant), so the edge reaches it with
 * no global lookup. `<key id>` (12 base32 characters) is the key's stable id: it survives rotation.
 * `<secret>` is 32 random bytes (52 base32 characters), stored nowhere: the authority keeps only a
 * keyed hash of it (key-digest.ts). `<check>` (16 base32 characters) is a MAC over the rest under a
 * key only the edge holds: a key the edge never issued is refused from its spelling alone, before
 * any Durable Object is asked or any byte of the body is read.
 */

/** A tenant id: lowercase letters, digits, `-` and `_`, 1-40 characters, alphanumeric at both ends. */
export const TENANT_ID = /^[a-z0-9](?:[a-z0-9_-]{0,38}[a-z0-9])?$/;

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
const KEY_ID_CHARS = 12;
const SECRET_BYTES = 32;
const SECRET_CHARS = 52;
const CHECK_BYTES = 10;

const API_KEY = /^sk-fr-([a-z0-9][a-z0-9_-]*)-([a-z2-7]{12})-([a-z2-7]{52})([a-z2-7]{16})$/;
const ADMIN_KEY = /^sk-fra-([a-z2-7]{12})-([a-z2-7]{52})([a-z2-7]{16})$/;

/** What kind of key, and for an API key its tenant: the check's MAC covers it. */
export type KeyScope = { kind: "api"; tenant: string } | { kind: "admin" };

export interface IssuedKeyParts {
  scope: KeyScope;
  keyId: string;
  secret: string;
  check: string;
}

export function parseApiKey(text: string): IssuedKeyParts | undefined {
  const match = API_KEY.exec(text);
  if (!match) return undefined;
  const [, tenant = "", keyId = "", secret = "", check = ""] = match;
  if (!TENANT_ID.test(tenant)) return undefined;
  return { scope: { kind: "api", tenant }, keyId, secret, check };
}

export function parseAdminKey(text: string): IssuedKeyParts | undefined {
  const match = ADMIN_KEY.exec(text);
  if (!match) return undefined;
  const [, keyId = "", secret = "", check = ""] = match;
  return { scope: { kind: "admin" }, keyId, secret, check };
}

export function formatKey(parts: IssuedKeyParts): string {
  const head = parts.scope.kind === "api" ? `sk-fr-${parts.scope.tenant}` : "sk-fra";
  return `${head}-${parts.keyId}-${parts.secret}${parts.check}`;
}

/** A redacted form operators can recognise a key by: its head and the last 4 characters of its check. */
export function keyHint(parts: IssuedKeyParts): string {
  const head = parts.scope.kind === "api" ? `sk-fr-${parts.scope.tenant}` : "sk-fra";
  return `${head}-${parts.keyId}-…${parts.check.slice(-4)}`;
}

export function newKeyId(): string {
  return base32(crypto.getRandomValues(new Uint8Array(8))).slice(0, KEY_ID_CHARS);
}

export function newSecret(): string {
  const secret = base32(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
  if (secret.length !== SECRET_CHARS) throw new Error("unexpected secret length");
  return secret;
}

/** The first `CHECK_BYTES` of a MAC, as the check's characters. */
export function checkOf(mac: Uint8Array): string {
  return base32(mac.subarray(0, CHECK_BYTES));
}

/** RFC 4648 base32, lowercase, unpadded. */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}
