/**
 * Engine.copyPrefix (real engine, tiny model): both methods — llama.cpp's sequence copy through the
 * binding in native/sequence-copy/ and a state restore — leave the target holding exactly the
 * prefix, the source untouched, and the target samples exactly as a sequence that prefilled the
 * prefix itself (greedy).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import {
  type Engine,
  type EngineSequence,
  GREEDY,
  PREFIX_COPY_METHODS,
  type PrefixCopyMethod,
  type Token,
} from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";

let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 2048,
    sequences: 3,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 256,
  });
});

afterAll(async () => {
  await engine?.dispose();
});

async function withSequences<T>(n: number, body: (...seqs: EngineSequence[]) => Promise<T>): Promise<T> {
  const seqs: EngineSequence[] = [];
  try {
    for (let i = 0; i < n; i++) seqs.push(await engine.acquireSequence());
    return await body(...seqs);
  } finally {
    for (const s of seqs) s.dispose();
  }
}

async function greedy(seq: EngineSequence, promptEnd: readonly Token[], maxTokens = 24): Promise<Token[]> {
  const out: Token[] = [];
  for await (const t of seq.generate({ ...GREEDY, maxTokens, promptEnd })) out.push(t);
  return out;
}

const tokens = (n: number, salt = 0): Token[] => Array.from({ length: n }, (_, i) => ((i + salt) * 7919 + 13) % 500);

describe("Engine.copyPrefix", () => {
  it("uses llama.cpp's sequence copy when the binding is built (npm install builds it)", () => {
    // A CPU build: a source under 1/32 of the cells (2048) is copied by a state restore instead.
    expect(engine.prefixCopy).toEqual({
      method: "sequence-copy",
      sequenceCopyUnavailable: undefined,
      stateRestoreBelow: 64,
    });
  });

  it("picks the smaller copy by default: a state restore for a short source, else the sequence copy", async () => {
    await withSequences(2, async (source, target) => {
      await source.append(tokens(40));
      expect(await engine.copyPrefix(source, target, 30)).toBe<PrefixCopyMethod>("state-restore");
      expect(target.tokens).toEqual(tokens(30));
      await source.append(tokens(60, 40));
      expect(await engine.copyPrefix(source, target, 90)).toBe<PrefixCopyMethod>("sequence-copy");
      expect(target.tokens).toEqual(source.tokens.slice(0, 90));
    });
  });

  for (const method of PREFIX_COPY_METHODS) {
    it(`${method}: the target holds the prefix and samples as a cold prefill does`, async () => {
      await withSequences(3, async (source, target, cold) => {
        const all = tokens(900);
        const prefix = all.slice(0, 700);
        await source.append(all);
        await cold.append(prefix);
        const expected = await greedy(cold, [5, 6, 7]);

        await target.append(tokens(300, 11)); // something to replace
        expect(await engine.copyPrefix(source, target, prefix.length, method)).toBe(method);
        expect(target.tokens).toEqual(prefix);
        expect(source.tokens).toEqual(all);
        expect(await greedy(target, [5, 6, 7])).toEqual(expected);
        // The source is unchanged and goes on as before.
        const sourceNext = await greedy(source, [9], 4);
        expect(sourceNext.length).toBeGreaterThan(0);
        expect(source.tokens.slice(0, all.length)).toEqual(all);
      });
    });
  }

  it("copies a source's whole KV, and into a sequence that just sampled", async () => {
    await withSequences(2, async (source, target) => {
      const all = tokens(400, 3);
      await source.append(all);
      await target.append(tokens(50, 5));
      await greedy(target, [1], 3);
      await engine.copyPrefix(source, target, all.length);
      expect(target.tokens).toEqual(all);
    });
  });

  it("refuses an out-of-range length or a busy sequence, leaving the source as it was", async () => {
    await withSequences(2, async (source, target) => {
      await source.append(tokens(100));
      await expect(engine.copyPrefix(source, target, 101)).rejects.toThrow(RangeError);
      await expect(engine.copyPrefix(source, target, 0)).rejects.toThrow(RangeError);
      await expect(engine.copyPrefix(source, source, 10)).rejects.toThrow(RangeError);
      const running = source.append(tokens(50, 1));
      await expect(engine.copyPrefix(source, target, 50)).rejects.toThrow(/busy/);
      await running;
      expect(source.tokens).toHaveLength(150);
    });
  });

  it("falls back to a state restore when the sequence copy is turned off", async () => {
    const off = await createEngine({ ...engine.options, prefixCopy: "state-restore" });
    try {
      expect(off.prefixCopy.method).toBe<PrefixCopyMethod>("state-restore");
      expect(off.prefixCopy.sequenceCopyUnavailable).toMatch(/turned off/);
      await expect(off.copyPrefix(await off.acquireSequence(), await off.acquireSequence(), 1)).rejects.toThrow(
        RangeError,
      );
    } finally {
      await off.dispose();
    }
  });
});
