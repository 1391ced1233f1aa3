/**
 * Issue 30 "Low": one wire spelling per ID and per sealed blob. Base64url leaves unused low bits in
 * the last character (an ID's 35 bytes are 47 characters: 2 spare bits); another character with the
 * same high bits decodes to the same bytes. Those spellings, and padded ones, are refused.
 */
import { describe, expect, it } from "vitest";
import { openText, sealText } from "../../../edge/core/sealed-text.ts";
import { mintId, newSessionId, verifyId } from "../../../shared/ids.ts";

const SECRET = "kq3Yv0pV_8N2mRzT7cXwLd4h";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** The other spellings of a base64url string's last character that decode to the same bytes. */
function sameBytesSpellings(text: string, spareBits: number): string[] {
  const last = ALPHABET.indexOf(text.at(-1) ?? "");
  const out: string[] = [];
  for (let low = 1; low < 1 << spareBits; low++) out.push(text.slice(0, -1) + ALPHABET[last ^ low]);
  return out;
}

describe("IDs have one spelling", () => {
  it("a minted ID verifies; the same bytes spelled otherwise do not", async () => {
    const session = newSessionId();
    const id = await mintId(SECRET, "toolu", "acme", session);
    expect((await verifyId(SECRET, id, "acme"))?.session).toBe(session);
    const variants = sameBytesSpellings(id, 2);
    expect(variants).toHaveLength(3);
    for (const variant of variants) expect(await verifyId(SECRET, variant, "acme"), variant).toBeUndefined();
  });
});

describe("sealed blobs have one spelling", () => {
  it("a sealed blob opens; padded or non-canonical spellings of its bytes do not", async () => {
    // 4 bytes of text: 12 + 4 + 16 = 32 bytes, 43 characters, the last with 2 spare bits.
    const blob = await sealText(SECRET, "acme", "reasoning", "abcd");
    expect(await openText(SECRET, "acme", "reasoning", blob)).toBe("abcd");
    const body = blob.slice("frv1.".length);
    expect(body.length % 4).toBe(3);
    for (const variant of sameBytesSpellings(blob, 2)) {
      expect(await openText(SECRET, "acme", "reasoning", variant), variant).toBeUndefined();
    }
    expect(await openText(SECRET, "acme", "reasoning", `${blob}=`)).toBeUndefined();
  });
});
