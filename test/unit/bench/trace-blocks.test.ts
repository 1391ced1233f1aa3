import { describe, expect, it } from "vitest";
import { BlockTokens, oneToOneAlphabet, seededRandom, tokensToText } from "../../../bench/trace/block-tokens.ts";
import { BYTE_TO_CHAR, textToByteChars } from "../../../native/model/byte-unicode.ts";
import { TEST_MODEL_SPECS } from "../../../native/model/gguf-writer.ts";
import { buildVocab } from "../../../native/model/vocab.ts";

/** Byte-level BPE as llama.cpp applies it: start from bytes, apply the lowest-ranked merge until none applies. */
const tables = new Map<number, { rank: Map<string, number>; ids: Map<string, number> }>();
function bpe(text: string, vocabSize: number): number[] {
  let table = tables.get(vocabSize);
  if (!table) {
    const vocab = buildVocab(vocabSize);
    table = {
      rank: new Map(vocab.merges.map((m, i) => [m, i])),
      ids: new Map(vocab.tokens.map((t, i) => [t, i])),
    };
    tables.set(vocabSize, table);
  }
  const { rank, ids } = table;
  let parts = [...textToByteChars(text)];
  for (;;) {
    let best = -1;
    let bestRank = Number.POSITIVE_INFINITY;
    for (let i = 0; i + 1 < parts.length; i++) {
      const r = rank.get(`${parts[i]} ${parts[i + 1]}`);
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) break;
    parts = [...parts.slice(0, best), `${parts[best]}${parts[best + 1]}`, ...parts.slice(best + 2)];
  }
  return parts.map((p) => ids.get(p) as number);
}

describe("trace block tokens", () => {
  for (const size of ["tiny", "mid"] as const) {
    const vocabSize = TEST_MODEL_SPECS[size].vocab;
    it(`${size}: the alphabet is normal byte tokens whose text tokenizes 1:1 in any order, after a newline too`, () => {
      const alphabet = oneToOneAlphabet(vocabSize);
      const vocab = buildVocab(vocabSize);
      expect(alphabet.length).toBeGreaterThan(40);
      for (const id of alphabet) {
        expect(vocab.tokenTypes[id]).toBe(1); // NORMAL, never control
        expect(vocab.tokens[id]).toBe(BYTE_TO_CHAR[id]);
      }
      const blocks = new BlockTokens(alphabet, 64);
      const tokens = blocks.prompt([1, 2, 3, 4, 5, 6, 7, 8], 500);
      expect(bpe(tokensToText(tokens), vocabSize)).toEqual(tokens);
      expect(bpe(`\n${tokensToText(tokens)}`, vocabSize)).toEqual([10, ...tokens]);
      // Every ordered pair of alphabet tokens stays two tokens.
      for (const a of alphabet) for (const b of alphabet) expect(bpe(tokensToText([a, b]), vocabSize)).toEqual([a, b]);
    });
  }

  it("a character that merges is not in the alphabet (the check above would catch a wrong alphabet)", () => {
    const alphabet = oneToOneAlphabet(TEST_MODEL_SPECS.mid.vocab);
    expect(alphabet).not.toContain("t".charCodeAt(0));
    expect(bpe("th", TEST_MODEL_SPECS.mid.vocab)).toHaveLength(1);
  });

  it("the same hash id always gives the same block, different ids different blocks", () => {
    const alphabet = oneToOneAlphabet(512);
    const a = new BlockTokens(alphabet, 32);
    const b = new BlockTokens(alphabet, 32);
    expect(a.block(7)).toEqual(b.block(7));
    expect(a.block(7)).toHaveLength(32);
    expect(a.block(7)).not.toEqual(a.block(8));
    expect(a.block(0)).not.toEqual(a.block(1));
    for (const t of a.block(123)) expect(alphabet).toContain(t);
    expect(seededRandom(5)()).toBe(seededRandom(5)());
  });

  it("a prompt is its blocks in order with the last cut at the input length", () => {
    const blocks = new BlockTokens(oneToOneAlphabet(512), 16);
    const prompt = blocks.prompt([3, 9, 4], 37);
    expect(prompt).toHaveLength(37);
    expect(prompt.slice(0, 16)).toEqual(blocks.block(3));
    expect(prompt.slice(16, 32)).toEqual(blocks.block(9));
    expect(prompt.slice(32)).toEqual(blocks.block(4).slice(0, 5));
    expect(blocks.prompt([3, 9], 32)).toEqual(prompt.slice(0, 32));
    expect(() => blocks.prompt([3, 9, 4], 32)).toThrow(/cannot hold 32 tokens/);
    expect(() => blocks.prompt([3], 17)).toThrow(/cannot hold/);
  });
});
