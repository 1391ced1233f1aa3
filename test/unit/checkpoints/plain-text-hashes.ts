/**
 * What an unkeyed index would leak: the plain SHA-256 of every prefix of a text, as a reader of
 * the disk or the bucket could compute it for a guessed prompt (hex, its first 32 hex digits, raw
 * digest bytes; over UTF-16 code units and over UTF-8).
 */
import { createHash } from "node:crypto";

export function plainPrefixHashes(text: string): Buffer[] {
  const needles: Buffer[] = [];
  for (let length = 1; length <= text.length; length++) {
    const prefix = text.slice(0, length);
    for (const encoding of ["utf16le", "utf8"] as const) {
      const digest = createHash("sha256").update(prefix, encoding).digest();
      const hex = digest.toString("hex");
      needles.push(digest, Buffer.from(hex), Buffer.from(hex.slice(0, 32)));
    }
  }
  return needles;
}

/** How many of `text`'s plain prefix hashes occur in `bytes` (0: none leaks). */
export function plainHashesIn(bytes: Buffer | string, text: string): number {
  const haystack = typeof bytes === "string" ? Buffer.from(bytes) : bytes;
  return plainPrefixHashes(text).filter((needle) => haystack.includes(needle)).length;
}
