import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidModelError } from "../../../native/engine-types.ts";
import { BYTE_TO_CHAR, byteCharsToBytes, textToByteChars } from "../../../native/model/byte-unicode.ts";
import { validateGguf } from "../../../native/model/gguf-validate.ts";
import { ensureTestModel, testModelPath, toFloat16Bits, writeTestModel } from "../../../native/model/gguf-writer.ts";
import { buildVocab, CONTROL_TOKENS } from "../../../native/model/vocab.ts";
import { TokenBytes } from "../../../native/tokenizer/token-bytes.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "frontier-gguf-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function tiny(name: string, seed: number): Promise<string> {
  const path = join(dir, name);
  await writeTestModel(path, "tiny", seed);
  return path;
}

/** Write a patched copy of `src` and return its path. */
async function patched(src: string, name: string, patch: (b: Buffer) => Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, patch(await readFile(src)));
  return path;
}

describe("byte-level alphabet", () => {
  it("maps all 256 bytes to distinct characters and back", () => {
    expect(new Set(BYTE_TO_CHAR).size).toBe(256);
    expect(BYTE_TO_CHAR[32]).toBe("Ġ");
    expect(BYTE_TO_CHAR[10]).toBe("Ċ");
    const text = "héllo\n wörld ✓";
    expect(Buffer.from(byteCharsToBytes(textToByteChars(text)) ?? []).toString("utf8")).toBe(text);
  });

  it("converts floats to half precision", () => {
    expect(toFloat16Bits(1)).toBe(0x3c00);
    expect(toFloat16Bits(-2)).toBe(0xc000);
    expect(toFloat16Bits(0.1)).toBe(0x2e66);
    expect(toFloat16Bits(65504)).toBe(0x7bff);
    expect(toFloat16Bits(1e6)).toBe(0x7c00);
    expect(toFloat16Bits(2 ** -24)).toBe(0x0001);
  });
});

describe("vocabulary", () => {
  it("has the requested size, valid merges and the control tokens last", () => {
    for (const size of [512, 2048]) {
      const v = buildVocab(size);
      expect(v.tokens).toHaveLength(size);
      expect(new Set(v.tokens).size).toBe(size);
      const seen = new Set(v.tokens.slice(0, 256));
      for (const m of v.merges) {
        const [a, b, ...rest] = m.split(" ");
        expect(rest).toHaveLength(0);
        expect(seen.has(a ?? "") && seen.has(b ?? "")).toBe(true);
        seen.add(`${a}${b}`);
      }
      expect(v.tokens.slice(-CONTROL_TOKENS.length)).toEqual([...CONTROL_TOKENS]);
      expect(v.tokenTypes.slice(-CONTROL_TOKENS.length).every((t) => t === 3)).toBe(true);
    }
  });
});

describe("GGUF writer + validator", () => {
  it("is deterministic for a seed and differs across seeds", async () => {
    const a = await readFile(await tiny("a.gguf", 7));
    const b = await readFile(await tiny("b.gguf", 7));
    const c = await readFile(await tiny("c.gguf", 8));
    expect(a.equals(b)).toBe(true);
    expect(a.equals(c)).toBe(false);
    expect(a.length).toBe(c.length);
  });

  it("accepts a generated model and summarizes it", async () => {
    const path = await tiny("ok.gguf", 3);
    const s = await validateGguf(path);
    expect(s).toMatchObject({
      architecture: "llama",
      name: "frontier-test-tiny",
      trainContextSize: 131072,
      vocabSize: 512,
      tokenizerModel: "gpt2",
      version: 3,
    });
    expect(s.chatTemplate).toContain("<|im_start|>");
    expect(s.identity).toMatch(/^[0-9a-f]{64}$/);
    expect(s.tokens[s.bosToken ?? -1]).toBe("<|endoftext|>");
    expect(s.tokens[s.eosToken ?? -1]).toBe("<|im_end|>");
    expect(s.metadata.get("tokenizer.ggml.add_bos_token")).toBe(false);
    expect(s.tensors.map((t) => t.name)).toContain("blk.1.ffn_down.weight");
    // Same file => same identity; same shape but other weights => another identity.
    expect((await validateGguf(await tiny("ok2.gguf", 3))).identity).toBe(s.identity);
    expect((await validateGguf(await tiny("ok3.gguf", 4))).identity).not.toBe(s.identity);
  });

  it("rejects a truncated file", async () => {
    const src = await tiny("full.gguf", 1);
    const half = await patched(src, "half.gguf", (b) => b.subarray(0, Math.floor(b.length / 2)));
    await expect(validateGguf(half)).rejects.toThrow(InvalidModelError);
    await expect(validateGguf(half)).rejects.toThrow(/beyond the end/);
    const short = await patched(src, "short.gguf", (b) => b.subarray(0, b.length - 1));
    await expect(validateGguf(short)).rejects.toThrow(/blk\.1\.ffn_down\.weight .*beyond the end/);
    const head = await patched(src, "head.gguf", (b) => b.subarray(0, 300));
    await expect(validateGguf(head)).rejects.toThrow(/ends inside the GGUF header/);
  });

  it("rejects a file without llama.feed_forward_length", async () => {
    const src = await tiny("ffl.gguf", 1);
    const path = await patched(src, "no-ffl.gguf", (b) => {
      const key = Buffer.from("llama.feed_forward_length");
      const at = b.indexOf(key);
      expect(at).toBeGreaterThan(0);
      const copy = Buffer.from(b);
      copy.write("X", at + key.length - 1); // same length, different key
      return copy;
    });
    await expect(validateGguf(path)).rejects.toThrow(InvalidModelError);
    await expect(validateGguf(path)).rejects.toThrow(/llama\.feed_forward_length/);
  });

  it("rejects a bad magic", async () => {
    const src = await tiny("magic.gguf", 1);
    const path = await patched(src, "bad-magic.gguf", (b) => {
      const copy = Buffer.from(b);
      copy.write("GGML", 0);
      return copy;
    });
    await expect(validateGguf(path)).rejects.toThrow(InvalidModelError);
    await expect(validateGguf(path)).rejects.toThrow(/bad magic/);
  });

  it("rejects a file that is not GGUF at all", async () => {
    const path = join(dir, "empty.gguf");
    await writeFile(path, "");
    await expect(validateGguf(path)).rejects.toThrow(InvalidModelError);
  });
});

describe("ensureTestModel", () => {
  it("generates once under FRONTIER_MODELS_DIR and reuses the file", async () => {
    const saved = process.env.FRONTIER_MODELS_DIR;
    process.env.FRONTIER_MODELS_DIR = join(dir, "models");
    try {
      const path = await ensureTestModel("tiny");
      expect(path).toBe(testModelPath("tiny"));
      expect(path).toBe(join(dir, "models", "frontier-tiny-v2.gguf"));
      const first = await stat(path);
      expect(await ensureTestModel("tiny")).toBe(path);
      expect((await stat(path)).mtimeMs).toBe(first.mtimeMs);
      await validateGguf(path);
    } finally {
      if (saved === undefined) delete process.env.FRONTIER_MODELS_DIR;
      else process.env.FRONTIER_MODELS_DIR = saved;
    }
  });
});

describe("TokenBytes", () => {
  it("decodes byte-level, control and SentencePiece byte tokens", () => {
    const gpt2 = new TokenBytes({
      tokenizerModel: "gpt2",
      tokens: ["Ġhi", "<|im_end|>", "Ã"],
      tokenTypes: [1, 3, 1],
      fallback: () => "",
    });
    expect([...gpt2.get(0)]).toEqual([32, 104, 105]);
    expect(Buffer.from(gpt2.get(1)).toString()).toBe("<|im_end|>");
    expect([...gpt2.get(2)]).toEqual([0xc3]);
    expect(() => gpt2.get(3)).toThrow(RangeError);
    const spm = new TokenBytes({
      tokenizerModel: "llama",
      tokens: ["<0xE2>", "▁the"],
      tokenTypes: [6, 1],
      fallback: () => "",
    });
    expect([...spm.get(0)]).toEqual([0xe2]);
    expect(Buffer.from(spm.get(1)).toString()).toBe(" the");
  });
});
