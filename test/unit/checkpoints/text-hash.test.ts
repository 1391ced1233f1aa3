/** Text hashing for prefix lookups. */
import { describe, expect, it } from "vitest";
import { hashText, prefixHashes } from "../../../gpu-worker/checkpoints/state/text-hash.ts";

describe("prefixHashes", () => {
  it("equals hashing each slice, including slices that split a surrogate pair", () => {
    const text = "sys \u{1F600} user ünïcode \u{1F680}!";
    const lengths = [0, 3, 5, 6, 12, text.length, text.length + 5, 5];
    const hashes = prefixHashes(text, lengths);
    expect([...hashes.keys()]).toEqual([0, 3, 5, 6, 12, text.length]);
    for (const [length, hash] of hashes) expect(hash).toBe(hashText(text.slice(0, length)));
  });

  it("keeps a lone surrogate distinct from U+FFFD", () => {
    expect(hashText("a\uD83D")).not.toBe(hashText("a\uFFFD"));
  });
});
