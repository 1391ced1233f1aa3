/** The keyed text hash checkpoints are indexed by. */
import { createHash, createHmac, hkdfSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { keyedPrefixHashes, keyedTextHash, textHashKey } from "../../../gpu-worker/checkpoints/state/text-hash.ts";
import { testDataKey } from "../../support/test-data-key.ts";

const plainSha256 = (text: string) => createHash("sha256").update(text, "utf16le").digest("hex");

describe("keyedPrefixHashes", () => {
  const key = textHashKey(testDataKey("tenant-a"));

  it("equals hashing each slice, including slices that split a surrogate pair", () => {
    const text = "sys \u{1F600} user ünïcode \u{1F680}!";
    const lengths = [0, 3, 5, 6, 12, text.length, text.length + 5, 5];
    const hashes = keyedPrefixHashes(key, text, lengths);
    expect([...hashes.keys()]).toEqual([0, 3, 5, 6, 12, text.length]);
    for (const [length, hash] of hashes) expect(hash).toBe(keyedTextHash(key, text.slice(0, length)));
  });

  it("keeps a lone surrogate distinct from U+FFFD", () => {
    expect(keyedTextHash(key, "a\uD83D")).not.toBe(keyedTextHash(key, "a\uFFFD"));
  });
});

describe("keyedTextHash", () => {
  const text = "<sys>You are a helpful agent.</sys><u>does my prompt start with this?</u>";

  it("is never the plain SHA-256 of the text, and differs per tenant and per key", () => {
    const a = keyedTextHash(textHashKey(testDataKey("tenant-a")), text);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(a).not.toBe(plainSha256(text));
    expect(a).not.toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    expect(keyedTextHash(textHashKey(testDataKey("tenant-b")), text)).not.toBe(a);
    expect(keyedTextHash(textHashKey(testDataKey("tenant-a", "rotated")), text)).not.toBe(a);
    expect(keyedTextHash(textHashKey(testDataKey("tenant-a")), text)).toBe(a);
  });

  it("is an HMAC under a key derived from (not equal to) the tenant's data key", () => {
    const dataKey = testDataKey("tenant-a");
    const key = textHashKey(dataKey);
    expect(key.bytes.equals(Buffer.from(dataKey.bytes))).toBe(false);
    // Someone who holds the sealing key as-is (not the derivation) cannot compute the hash.
    const underDataKey = createHmac("sha256", dataKey.bytes)
      .update(createHash("sha256").update(text, "utf16le").digest())
      .digest("hex");
    expect(keyedTextHash(key, text)).not.toBe(underDataKey);
    const info = Buffer.from("frontier/checkpoint/text-hash/v1\u0000tenant-a");
    const derived = Buffer.from(hkdfSync("sha256", dataKey.bytes, Buffer.alloc(0), info, 32));
    expect(key.bytes.equals(derived)).toBe(true);
  });
});
