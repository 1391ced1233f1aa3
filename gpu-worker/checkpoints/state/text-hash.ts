/**
 * The keyed text hash a checkpoint is indexed by: HMAC-SHA-256, under a key derived from the
 * tenant's data key, of the SHA-256 of the covered text. The index and the replica's metadata hold
 * only this value, so whoever reads them without the tenant's key cannot confirm a guessed prompt;
 * another tenant's key (or a rotated one) hashes the same text to an unrelated value.
 *
 * The text is hashed over its UTF-16 code units: a prefix that ends inside a surrogate pair stays
 * distinct from one ending in U+FFFD. A lookup hashes every candidate prefix length of a request in
 * one pass: the running SHA-256 is copied at each boundary and only that 32-byte digest is MACed.
 */
import { createHash, createHmac, type Hash, hkdfSync } from "node:crypto";
import type { TenantDataKey } from "./sealed-file.ts";

/** HKDF info of the index key: never the sealing key, and bound to the tenant. */
const INDEX_KEY_INFO = "frontier/checkpoint/text-hash/v1";

/** The key a tenant's index rows are hashed under, derived from its data key. */
export interface TextHashKey {
  readonly tenant: string;
  readonly bytes: Buffer;
}

const derived = new WeakMap<TenantDataKey, TextHashKey>();

/**
 * The index key of `dataKey`: HKDF-SHA-256 (info = a label and the tenant), so it is independent of
 * the key the data key wraps sealed files with. Cached per key object (one request's key).
 */
export function textHashKey(dataKey: TenantDataKey): TextHashKey {
  let key = derived.get(dataKey);
  if (!key) {
    const info = Buffer.from(`${INDEX_KEY_INFO}\u0000${dataKey.tenant}`, "utf8");
    key = { tenant: dataKey.tenant, bytes: Buffer.from(hkdfSync("sha256", dataKey.bytes, Buffer.alloc(0), info, 32)) };
    derived.set(dataKey, key);
  }
  return key;
}

function keyed(key: TextHashKey, running: Hash): string {
  return createHmac("sha256", key.bytes).update(running.digest()).digest("hex");
}

/** The keyed hash (hex) of `text`. */
export function keyedTextHash(key: TextHashKey, text: string): string {
  return keyed(key, createHash("sha256").update(text, "utf16le"));
}

/**
 * Keyed hashes of `text.slice(0, length)` for each length, in one pass over the text (the running
 * SHA-256 is copied at each boundary, then MACed). Lengths beyond the text are skipped.
 */
export function keyedPrefixHashes(key: TextHashKey, text: string, lengths: readonly number[]): Map<number, string> {
  const ascending = [...new Set(lengths)].filter((n) => n >= 0 && n <= text.length).sort((a, b) => a - b);
  const hashes = new Map<number, string>();
  const running = createHash("sha256");
  let at = 0;
  for (const length of ascending) {
    running.update(text.slice(at, length), "utf16le");
    at = length;
    hashes.set(length, keyed(key, running.copy()));
  }
  return hashes;
}
