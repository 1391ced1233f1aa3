import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidModelError } from "../../../native/engine-types.ts";
import { FAMILIES } from "../../../native/model/families.ts";
import { buildFamilyVocab, looksSpecial, type TokenizerJson } from "../../../native/model/family-vocab.ts";
import { GgufTokenType } from "../../../native/model/gguf-format.ts";
import { validateGguf } from "../../../native/model/gguf-validate.ts";
import { llamaShapeMeta, planTensors, TEST_MODEL_SPECS, writeGguf } from "../../../native/model/gguf-writer.ts";

/** A four-token BPE with three added tokens, shaped like a Hugging Face tokenizer.json. */
const TINY: TokenizerJson = {
  added_tokens: [
    { id: 4, content: "<|im_start|>", special: true },
    { id: 5, content: "<think>", special: false },
    { id: 6, content: "<｜User｜>", special: false },
  ],
  normalizer: null,
  pre_tokenizer: null,
  model: { type: "BPE", vocab: { a: 0, b: 1, ab: 2, Ċ: 3 }, merges: [["a", "b"]] },
};

describe("buildFamilyVocab", () => {
  it("types added tokens as llama.cpp's converter does and pads to the checkpoint's size", () => {
    const vocab = buildFamilyVocab({ ...FAMILIES.qwen3, paddedVocab: 9 }, TINY);
    expect(vocab.tokens).toEqual(["a", "b", "ab", "Ċ", "<|im_start|>", "<think>", "<｜User｜>", "[PAD7]", "[PAD8]"]);
    expect(vocab.tokenTypes).toEqual([
      GgufTokenType.NORMAL,
      GgufTokenType.NORMAL,
      GgufTokenType.NORMAL,
      GgufTokenType.NORMAL,
      GgufTokenType.CONTROL, // special
      GgufTokenType.USER_DEFINED, // not special, not special-looking
      GgufTokenType.CONTROL, // not special, but looks special (<｜…｜>)
      GgufTokenType.UNUSED,
      GgufTokenType.UNUSED,
    ]);
    expect(vocab.merges).toEqual(["a b"]);
    expect(vocab.added.get("<think>")).toBe(5);
  });

  it("recognises special-looking texts", () => {
    for (const t of ["<|start|>", "<｜tool▁sep｜>", "<pad>", "<unused12>"]) expect(looksSpecial(t), t).toBe(true);
    for (const t of ["<think>", "[gMASK]", "<tool_call>", "|>"]) expect(looksSpecial(t), t).toBe(false);
  });
});

describe("validateGguf on vocabularies", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "frontier-family-vocab-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a vocabulary holding one text twice (llama.cpp would abort)", async () => {
    const spec = { ...TEST_MODEL_SPECS.tiny, vocab: 3 };
    const path = join(dir, "dup.gguf");
    await writeGguf(
      path,
      [
        ...llamaShapeMeta("dup", spec),
        ["tokenizer.ggml.model", { t: "str", v: "gpt2" }],
        ["tokenizer.ggml.tokens", { t: "strs", v: ["a", "b", "a"] }],
        ["tokenizer.ggml.merges", { t: "strs", v: [] }],
      ],
      planTensors(spec, true),
      1,
    );
    await expect(validateGguf(path)).rejects.toThrow(InvalidModelError);
    await expect(validateGguf(path)).rejects.toThrow(/"a" twice/);
  });

  it("reads a metadata section larger than its first read (one pass) and reports the merges", async () => {
    const spec = { ...TEST_MODEL_SPECS.tiny, vocab: 40_000 };
    const tokens = Array.from({ length: spec.vocab }, (_, i) => `token-${i}-${"x".repeat(20)}`);
    const path = join(dir, "big.gguf");
    await writeGguf(
      path,
      [
        ...llamaShapeMeta("big", spec),
        ["tokenizer.ggml.model", { t: "str", v: "gpt2" }],
        ["tokenizer.ggml.tokens", { t: "strs", v: tokens }],
        ["tokenizer.ggml.merges", { t: "strs", v: ["a b"] }],
      ],
      planTensors(spec, true),
      1,
    );
    const summary = await validateGguf(path);
    expect(summary.tokens).toEqual(tokens);
    expect(summary.merges).toEqual(["a b"]);
    expect(summary.tensors.some((t) => t.name === "output.weight")).toBe(false);
  });
});
