/**
 * llama.cpp's std::regex fallback recurses once per character of a run it repeats over: 30,000 `}`
 * segfaulted the worker (issue 14). The engine refuses such runs before llama.cpp sees them, for
 * the `default` pre-tokenizer of the generated models and for `deepseek-v3` (where letters and
 * whitespace recurse too). Without the guard each refused case below kills this test process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import { type Engine, TokenizerInputError } from "../../native/engine-types.ts";
import { ensureTestModel, writeTestModel } from "../../native/model/gguf-writer.ts";
import { MAX_TOKENIZER_RUN } from "../../native/tokenizer/tokenizer-guard.ts";

const OPTIONS = {
  contextSize: 512,
  sequences: 1,
  threads: 1,
  gpu: false,
  flashAttention: false,
  batchSize: 64,
} as const;

let dir: string;
let defaultPre: Engine;
let deepseekPre: Engine;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "frontier-tokenizer-guard-"));
  const deepseekModel = join(dir, "deepseek-v3-pre.gguf");
  await writeTestModel(deepseekModel, "tiny", 1, "deepseek-v3");
  defaultPre = await createEngine({ modelPath: await ensureTestModel("tiny"), ...OPTIONS });
  deepseekPre = await createEngine({ modelPath: deepseekModel, ...OPTIONS });
});

afterAll(async () => {
  await defaultPre?.dispose();
  await deepseekPre?.dispose();
  await rm(dir, { recursive: true, force: true });
});

describe("tokenizer guard (default pre-tokenizer)", () => {
  it.each(["}", "-", "1"])("refuses %j x 30,000 with a TokenizerInputError instead of crashing", (char) => {
    expect(() => defaultPre.tokenize(char.repeat(30_000), { special: false })).toThrow(TokenizerInputError);
    expect(() => defaultPre.tokenize(char.repeat(30_000), { special: true })).toThrow(/run of 30000/);
  });

  it("tokenizes a run at the bound, and long runs of classes its pre-tokenizer splits by hand", () => {
    expect(defaultPre.tokenize("}".repeat(MAX_TOKENIZER_RUN), { special: false }).length).toBeGreaterThan(0);
    expect(() => defaultPre.tokenize("}".repeat(MAX_TOKENIZER_RUN + 1), { special: false })).toThrow(
      TokenizerInputError,
    );
    // Letters and spaces go through llama.cpp's hand-written gpt2 splitter: no recursion, no bound.
    expect(defaultPre.tokenize("a".repeat(30_000), { special: false }).length).toBeGreaterThan(0);
    expect(defaultPre.tokenize(" ".repeat(30_000), { special: false }).length).toBeGreaterThan(0);
    // Many short runs add up to a long text, not a long run.
    const mixed = "}a-1 ".repeat(20_000);
    expect(defaultPre.detokenize(defaultPre.tokenize(mixed, { special: false }))).toBe(mixed);
  });
});

describe("tokenizer guard (deepseek-v3 pre-tokenizer)", () => {
  it.each(["a", "}", " "])("refuses %j x 30,000", (char) => {
    expect(() => deepseekPre.tokenize(char.repeat(30_000), { special: false })).toThrow(TokenizerInputError);
  });

  it("accepts digits (its digit regex is bounded to three) and runs at the bound", () => {
    expect(deepseekPre.tokenize("1".repeat(30_000), { special: false }).length).toBeGreaterThan(0);
    expect(deepseekPre.tokenize("a".repeat(MAX_TOKENIZER_RUN), { special: false }).length).toBeGreaterThan(0);
  });
});
