/**
 * A native sampling failure inside node-llama-cpp (llama.cpp's grammar refusing the token the
 * sampler picked) was an unhandled rejection that killed the worker, and left the evaluation
 * hanging (issue 14). A grammar that needs a character no token of the byte-level test vocabulary
 * spells (NUL) triggers it; the generation must end with a SamplingError instead, and the sequence
 * and the engine must go on. Vitest fails a run that sees an unhandled rejection.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import { type Engine, SamplingError, type Token } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";

let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 256,
    sequences: 2,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 64,
    tokenizerThread: false,
  });
});

afterAll(async () => {
  await engine?.dispose();
});

const SAMPLING = { temperature: 1, topP: 1, topK: 0, minP: 0, seed: 1 } as const;

async function drain(generation: AsyncGenerator<Token, void, void>): Promise<Token[]> {
  const out: Token[] = [];
  for await (const token of generation) out.push(token);
  return out;
}

describe("sampling guard", () => {
  it("ends a generation whose grammar no token can follow with a SamplingError; the sequence goes on", async () => {
    const seq = await engine.acquireSequence();
    try {
      const prompt = engine.tokenize("hello", { special: false });
      await seq.append(prompt);
      const dead = drain(seq.generate({ ...SAMPLING, grammar: 'root ::= "\\x00"', maxTokens: 4 }));
      await expect(dead).rejects.toThrow(SamplingError);
      await expect(dead).rejects.toThrow(/empty grammar stack/);
      // The KV still holds exactly the prompt, and the next generation samples normally.
      expect(seq.tokens).toEqual(prompt);
      const next = await drain(seq.generate({ ...SAMPLING, grammar: 'root ::= "ok"', maxTokens: 8 }));
      expect(engine.detokenize(next.filter((t) => !engine.isEndOfGeneration(t)))).toBe("ok");
    } finally {
      seq.dispose();
    }
  });

  it("keeps other sequences of the context unaffected", async () => {
    const a = await engine.acquireSequence();
    const b = await engine.acquireSequence();
    try {
      await a.append(engine.tokenize("one", { special: false }));
      await b.append(engine.tokenize("two", { special: false }));
      const [dead, fine] = await Promise.allSettled([
        drain(a.generate({ ...SAMPLING, grammar: 'root ::= "\\x00"', maxTokens: 4 })),
        drain(b.generate({ ...SAMPLING, grammar: undefined, maxTokens: 4 })),
      ]);
      expect(dead.status).toBe("rejected");
      expect(fine.status).toBe("fulfilled");
    } finally {
      a.dispose();
      b.dispose();
    }
  });
});
