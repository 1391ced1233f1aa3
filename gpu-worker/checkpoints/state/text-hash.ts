import { createHash } from "node:crypto";

/**
 * sha256 (hex) of a text's UTF-16 code units. Hashing code units rather than UTF-8 keeps a prefix
 * that ends inside a surrogate pair distinct from one ending in U+FFFD.
 */
export function hashText(text: string): string {
  return createHash("sha256").update(text, "utf16le").digest("hex");
}

/**
 * Hashes of `text.slice(0, length)` for each length, in one pass over the text (the running hash is
 * copied at each boundary). Lengths beyond the text are skipped.
 */
export function prefixHashes(text: string, lengths: readonly number[]): Map<number, string> {
  const ascending = [...new Set(lengths)].filter((n) => n >= 0 && n <= text.length).sort((a, b) => a - b);
  const hashes = new Map<number, string>();
  const running = createHash("sha256");
  let at = 0;
  for (const length of ascending) {
    running.update(text.slice(at, length), "utf16le");
    at = length;
    hashes.set(length, running.copy().digest("hex"));
  }
  return hashes;
}
