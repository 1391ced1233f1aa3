import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import {
  DisposedError,
  type Engine,
  type EngineSequence,
  GREEDY,
  InvalidGrammarError,
  InvalidModelError,
  NoFreeSequenceError,
  type SampleOptions,
  type Token,
} from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";

const SEQUENCES = 4;

let engine: Engine;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "frontier-engine-"));
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 2048,
    sequences: SEQUENCES,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 512,
  });
});

afterAll(async () => {
  await engine?.dispose();
  await rm(dir, { recursive: true, force: true });
});

/** Run `body` with fresh sequences, always disposing them. */
async function withSequences<T>(n: number, body: (...seqs: EngineSequence[]) => Promise<T>): Promise<T> {
  const seqs: EngineSequence[] = [];
  try {
    for (let i = 0; i < n; i++) seqs.push(await engine.acquireSequence());
    return await body(...seqs);
  } finally {
    for (const s of seqs) s.dispose();
  }
}

async function collect(
  seq: EngineSequence,
  maxTokens: number,
  options: Partial<SampleOptions> & { promptEnd?: readonly Token[] } = {},
): Promise<Token[]> {
  const out: Token[] = [];
  for await (const t of seq.generate({ ...GREEDY, ...options, maxTokens })) out.push(t);
  return out;
}

const chat = (user: string): string => `<|im_start|>user\n${user}<|im_end|>\n<|im_start|>assistant\n`;

describe("model and tokenizer", () => {
  it("reports the model", () => {
    const m = engine.model;
    expect(m.name).toBe("frontier-test-tiny");
    expect(m.architecture).toBe("llama");
    expect(m.trainContextSize).toBe(131072);
    expect(m.vocabSize).toBe(512);
    expect(m.chatTemplate).toContain("<|im_start|>");
    expect(m.identity).toMatch(/^[0-9a-f]{64}$/);
    const text = (t: Token | undefined): string => (t === undefined ? "" : engine.detokenize([t]));
    expect(text(m.bosToken)).toBe("<|endoftext|>");
    expect(text(m.eosToken)).toBe("<|im_end|>");
    expect(m.endOfGenerationTokens.map(text).sort()).toEqual(
      ["<|endoftext|>", "<|im_end|>", "<｜end▁of▁sentence｜>"].sort(),
    );
    for (const t of m.endOfGenerationTokens) expect(engine.isEndOfGeneration(t)).toBe(true);
    expect(engine.isEndOfGeneration(engine.tokenize("a", { special: false })[0] ?? -1)).toBe(false);
  });

  it("turns control-token text into control tokens only with special on", () => {
    const on = engine.tokenize("<|im_start|>", { special: true });
    expect(on).toHaveLength(1);
    const imStart = on[0] ?? -1;
    const off = engine.tokenize("<|im_start|>", { special: false });
    expect(off.length).toBeGreaterThan(1);
    expect(off).not.toContain(imStart);
    expect(engine.detokenize(off)).toBe("<|im_start|>");
    expect(engine.detokenize(on)).toBe("<|im_start|>");
    const prompt = engine.tokenize(chat("hi"), { special: true });
    expect(prompt[0]).toBe(imStart);
    expect(engine.tokenize(chat("hi"), { special: false })).not.toContain(imStart);
  });

  it("round-trips ASCII text and token bytes", () => {
    const text = 'Hello, world! The quick brown fox 123.\n\t  {"a": [1, 2]} // done';
    const tokens = engine.tokenize(text, { special: false });
    expect(engine.detokenize(tokens)).toBe(text);
    const bytes = Buffer.concat(tokens.map((t) => engine.tokenBytes(t)));
    expect(bytes.toString("utf8")).toBe(text);
    expect(engine.tokenize("", { special: true })).toEqual([]);
    expect(() => engine.tokenBytes(512)).toThrow(RangeError);
  });
});

describe("sequences", () => {
  it("greedy generation is deterministic", async () => {
    await withSequences(2, async (a, b) => {
      const prompt = engine.tokenize(chat("Tell me a story"), { special: true });
      await a.append(prompt);
      await b.append(prompt);
      const x = await collect(a, 24);
      const y = await collect(b, 24);
      expect(x).toHaveLength(24);
      expect(y).toEqual(x);
      // The last yielded token was never evaluated.
      expect(a.tokens).toEqual([...prompt, ...x.slice(0, -1)]);
    });
  });

  it("continuing after append equals a cold prefill of the whole prompt", async () => {
    await withSequences(2, async (live, cold) => {
      const first = engine.tokenize(chat("What is 2+2?"), { special: true });
      const reply = engine.tokenize("It is 4.<|im_end|>\n", { special: true });
      const second = engine.tokenize(chat("And 3+3?"), { special: true });
      await live.append(first);
      await collect(live, 5); // touch the KV, then rewind to the prompt and continue the conversation
      await live.truncate(first.length);
      await live.append(reply);
      await live.append(second);
      const full = [...first, ...reply, ...second];
      expect(live.tokens).toEqual(full);
      await cold.append(full);
      expect(await collect(live, 20)).toEqual(await collect(cold, 20));
    });
  });

  it("a prompt end evaluated by the first sampling decode continues exactly like a full prefill", async () => {
    await withSequences(2, async (held, full) => {
      const prompt = engine.tokenize(chat("Hold the last token back"), { special: true });
      await full.append(prompt);
      const expected = await collect(full, 12);
      await held.append(prompt.slice(0, -3));
      const promptEnd = prompt.slice(-3);
      const got: Token[] = [];
      for await (const t of held.generate({ ...GREEDY, maxTokens: 12, promptEnd })) {
        // The first decode evaluated the prompt's end, once: the KV holds the prompt, then the samples.
        expect(held.tokens).toEqual([...prompt, ...got]);
        got.push(t);
      }
      expect(got).toEqual(expected);
      // maxTokens 0 still puts the prompt's end in the KV; a prompt end past the capacity is refused.
      await held.truncate(prompt.length - 2);
      expect(await collect(held, 0, { promptEnd: prompt.slice(-2) })).toEqual([]);
      expect(held.tokens).toEqual(prompt);
      const tooMany = new Array<Token>(2048).fill(prompt[0] ?? 0);
      await expect(collect(held, 1, { promptEnd: tooMany })).rejects.toThrow(RangeError);
      expect(held.tokens).toEqual(prompt);
    });
  });

  it("truncate then re-append gives the same next greedy tokens", async () => {
    await withSequences(1, async (seq) => {
      const prompt = engine.tokenize(chat("Summarize the file"), { special: true });
      await seq.append(prompt);
      const before = await collect(seq, 16);
      const cut = prompt.length - 7;
      await seq.truncate(cut);
      expect(seq.tokens).toEqual(prompt.slice(0, cut));
      await seq.append(prompt.slice(cut));
      expect(await collect(seq, 16)).toEqual(before);
      await seq.truncate(0);
      expect(seq.tokens).toEqual([]);
      await seq.append(prompt);
      expect(await collect(seq, 16)).toEqual(before);
    });
  });

  it("save/load state into another sequence gives the same continuation", async () => {
    await withSequences(2, async (a, b) => {
      const prompt = engine.tokenize(chat("Remember this state"), { special: true });
      await a.append(prompt);
      const path = join(dir, "state.bin");
      const { bytes } = await a.saveState(path);
      expect(bytes).toBeGreaterThan(0);
      const expected = await collect(a, 16);
      await b.loadState(path, prompt);
      expect(b.tokens).toEqual(prompt);
      expect(await collect(b, 16)).toEqual(expected);
      // A state whose tokens differ from what the caller expects is refused (and the sequence cleared).
      await expect(b.loadState(path, prompt.slice(1))).rejects.toThrow(/differ/);
      expect(b.tokens).toEqual([]);
    });
  });

  it("grammar-constrained generation yields exactly the grammar's text, then end-of-generation", async () => {
    await withSequences(1, async (seq) => {
      await seq.append(engine.tokenize(chat("Give me JSON"), { special: true }));
      const grammar = 'root ::= "{\\"a\\":" [0-9] "}"';
      for (const options of [{ grammar }, { grammar, temperature: 0.8, seed: 42, topK: 40, topP: 0.95 }]) {
        const out = await collect(seq, 32, options);
        const last = out.at(-1);
        expect(last !== undefined && engine.isEndOfGeneration(last)).toBe(true);
        expect(engine.detokenize(out.slice(0, -1))).toMatch(/^\{"a":[0-9]\}$/);
      }
      await expect(collect(seq, 4, { grammar: "root ::= (" })).rejects.toThrow(InvalidGrammarError);
      expect(seq.tokens.length).toBeGreaterThan(0);
    });
  });

  it("seeded sampling is reproducible", async () => {
    await withSequences(2, async (a, b) => {
      const prompt = engine.tokenize(chat("Be random"), { special: true });
      await a.append(prompt);
      await b.append(prompt);
      const opts = { temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1234 };
      expect(await collect(a, 20, opts)).toEqual(await collect(b, 20, opts));
    });
  });

  it("stops on break and on abort with `tokens` exact", async () => {
    await withSequences(1, async (seq) => {
      const prompt = engine.tokenize(chat("Count"), { special: true });
      await seq.append(prompt);
      const got: Token[] = [];
      for await (const t of seq.generate({ ...GREEDY, maxTokens: 50 })) {
        got.push(t);
        if (got.length === 5) break;
      }
      // The 5th token's decode was already running when the consumer stopped: it is in the KV.
      expect(seq.tokens).toEqual([...prompt, ...got]);

      await seq.truncate(prompt.length);
      const controller = new AbortController();
      const seen: Token[] = [];
      const run = async (): Promise<void> => {
        for await (const t of seq.generate({ ...GREEDY, maxTokens: 50, signal: controller.signal })) {
          seen.push(t);
          if (seen.length === 3) controller.abort();
        }
      };
      await expect(run()).rejects.toThrow(/abort/i);
      expect(seen).toHaveLength(3);
      expect(seq.tokens).toEqual([...prompt, ...seen]);
      await expect(collect(seq, 5, {})).resolves.toHaveLength(5); // still usable
    });
  });

  it("parallel sequences generate the same tokens as one at a time", async () => {
    await withSequences(3, async (a, b, c) => {
      const prompts = ["first", "second one", "the third prompt"].map((p) =>
        engine.tokenize(chat(p), { special: true }),
      );
      const seqs = [a, b, c];
      await Promise.all(seqs.map((s, i) => s.append(prompts[i] ?? [])));
      const together = await Promise.all(seqs.map((s) => collect(s, 24)));
      const alone: Token[][] = [];
      for (const [i, s] of seqs.entries()) {
        await s.truncate(prompts[i]?.length ?? 0);
        alone.push(await collect(s, 24));
      }
      expect(together).toEqual(alone);
    });
  });

  it("dispose mid-generation or mid-prefill rejects with DisposedError and frees the sequence", async () => {
    const seq = await engine.acquireSequence();
    await seq.append(engine.tokenize(chat("go on"), { special: true }));
    const run = async (): Promise<number> => {
      let n = 0;
      for await (const _ of seq.generate({ ...GREEDY, maxTokens: 100 })) if (++n === 3) seq.dispose();
      return n;
    };
    await expect(run()).rejects.toThrow(DisposedError);
    const other = await engine.acquireSequence();
    const long = engine.tokenize("abc def ghi ".repeat(150), { special: false });
    const pending = other.append(long);
    other.dispose(); // while the first batch is being decoded
    await expect(pending).rejects.toThrow(DisposedError);
    await withSequences(SEQUENCES, async (...all) => {
      await all[0]?.append(long.slice(0, 10));
      expect(await collect(all[0] as EngineSequence, 3)).toHaveLength(3);
    });
  });

  it("prefills in batches with progress and honours abort between batches", async () => {
    await withSequences(1, async (seq) => {
      const long = engine.tokenize("lorem ipsum dolor sit amet ".repeat(80), { special: false });
      expect(long.length).toBeGreaterThan(1100);
      const progress: Array<[number, number]> = [];
      const controller = new AbortController();
      const append = seq.append(long, {
        signal: controller.signal,
        onProgress: (done, total) => {
          progress.push([done, total]);
          controller.abort();
        },
      });
      await expect(append).rejects.toThrow(/abort/i);
      expect(progress).toEqual([[512, long.length]]);
      expect(seq.tokens).toEqual(long.slice(0, 512));
      await seq.append(long.slice(512), { onProgress: (done, total) => progress.push([done, total]) });
      expect(seq.tokens).toEqual(long);
      await expect(seq.append([512])).rejects.toThrow(RangeError);
      await expect(seq.append(new Array<Token>(2048).fill(1))).rejects.toThrow(/capacity/);
    });
  });

  it("hands out every sequence, refuses one more, and reuses a disposed one at once", async () => {
    const seqs: EngineSequence[] = [];
    try {
      for (let i = 0; i < SEQUENCES; i++) seqs.push(await engine.acquireSequence());
      expect(new Set(seqs.map((s) => s.index))).toEqual(new Set([0, 1, 2, 3]));
      expect(engine.stats()).toEqual({ sequencesTotal: SEQUENCES, sequencesFree: 0, tokensHeld: 0 });
      await seqs[0]?.append([1, 2, 3]);
      expect(engine.stats().tokensHeld).toBe(3);
      await expect(engine.acquireSequence()).rejects.toThrow(NoFreeSequenceError);
      const gone = seqs.pop();
      gone?.dispose();
      expect(engine.stats().sequencesFree).toBe(1);
      if (gone === undefined) throw new Error("no sequence");
      await expect(gone.append([1])).rejects.toThrow(DisposedError);
      await expect(gone.generate({ ...GREEDY, maxTokens: 1 }).next()).rejects.toThrow(DisposedError);
      await expect(gone.saveState(join(dir, "x.bin"))).rejects.toThrow(DisposedError);
      expect(gone.tokens).toEqual([]);
      const again = await engine.acquireSequence();
      seqs.push(again);
      expect(again.tokens).toEqual([]);
      expect(again.index).toBe(gone.index);
    } finally {
      for (const s of seqs) s.dispose();
    }
  });

  it("refuses an invalid model before llama.cpp sees it", async () => {
    const bad = join(dir, "bad.gguf");
    await writeFile(bad, "not a model");
    const options = { ...engine.options, modelPath: bad };
    await expect(createEngine(options)).rejects.toThrow(InvalidModelError);
    // Without feed_forward_length llama.cpp would abort the process; the validator refuses it first.
    const good = await readFile(engine.model.path);
    const key = Buffer.from("llama.feed_forward_length");
    const patched = Buffer.from(good);
    patched.write("X", good.indexOf(key) + key.length - 1);
    await writeFile(bad, patched);
    await expect(createEngine(options)).rejects.toThrow(/feed_forward_length/);
  });
});
