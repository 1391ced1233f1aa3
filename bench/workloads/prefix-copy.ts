/**
 * The shared-prefix rung's costs, in process on the real engine: copying a prefix another sequence
 * holds into a new one — llama.cpp's sequence copy (native/sequence-copy/) and a state restore side
 * by side with prefilling the same tokens, in ms per 1k tokens, at each `--restore-tokens` size —
 * and the index's memory per 1k cached tokens (and its hashing time) at two block sizes.
 * `npm run bench -- --only prefix-copy`.
 */
import { randomBytes } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { blockChain, tenantChainRoot } from "../../gpu-worker/continuation/shared-prefix/block-chain.ts";
import { SharedPrefixIndex } from "../../gpu-worker/continuation/shared-prefix/prefix-index.ts";
import { createEngine } from "../../native/engine.ts";
import {
  type Engine,
  type EngineSequence,
  PREFIX_COPY_METHODS,
  type PrefixCopyMethod,
  type Token,
} from "../../native/engine-types.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import type { BenchOptions, SummaryRow, Workload } from "../workload.ts";

/** Timed copies per method and repetition (after one untimed copy each). */
const COPIES = 3;

const TEXT = "The agent reads the tool result, updates its plan and calls the next tool with care. ";

function promptOf(engine: Engine, tokens: number, salt: string): Token[] {
  let out: Token[] = engine.tokenize(`${salt} `, { special: false });
  while (out.length < tokens) out = out.concat(engine.tokenize(TEXT, { special: false }));
  return out.slice(0, tokens);
}

interface CopyRow {
  tokens: number;
  prefillMs: number[];
  copyMs: Record<PrefixCopyMethod, number[]>;
  /** The first copy into a sequence whose cells were never written (one per repetition). */
  coldMs: Record<PrefixCopyMethod, number[]>;
}

async function measureCopies(options: BenchOptions, tokens: number, contextSize: number): Promise<CopyRow> {
  const engine = await createEngine({
    modelPath: options.modelPath,
    contextSize,
    // A source and a warm target, plus one never-written target per method and repetition.
    sequences: 2 + PREFIX_COPY_METHODS.length * options.reps,
    threads: Number(process.env.FRONTIER_THREADS || 1),
    gpu: options.gpu === "off" ? false : "auto",
    flashAttention: process.env.FRONTIER_FLASH_ATTENTION === "on",
    batchSize: 512,
  });
  const row: CopyRow = {
    tokens,
    prefillMs: [],
    copyMs: { "sequence-copy": [], "state-restore": [] },
    coldMs: { "sequence-copy": [], "state-restore": [] },
  };
  const cold: EngineSequence[] = [];
  try {
    if (engine.prefixCopy.sequenceCopyUnavailable)
      throw new Error(`llama.cpp's sequence copy is unavailable: ${engine.prefixCopy.sequenceCopyUnavailable}`);
    for (let rep = 0; rep < options.reps; rep++) {
      const prompt = promptOf(engine, tokens, `rep ${rep}`);
      const source = await engine.acquireSequence();
      const target = await engine.acquireSequence();
      const t0 = performance.now();
      await source.append(prompt);
      row.prefillMs.push(performance.now() - t0);
      // Into a sequence no one has written (held to the end, so its cells are never reused here).
      for (const method of copy0Order(rep)) {
        const fresh = await engine.acquireSequence();
        cold.push(fresh);
        const c0 = performance.now();
        await engine.copyPrefix(source, fresh, tokens, method);
        row.coldMs[method].push(performance.now() - c0);
      }
      // One untimed copy each first: the first copy into a sequence's cells pays the page faults of
      // every cell it writes (a one-time cost per sequence, not per copy). Then alternate the order.
      for (const method of PREFIX_COPY_METHODS) await engine.copyPrefix(source, target, tokens, method);
      for (let copy = 0; copy < COPIES; copy++) {
        const methods = copy % 2 === 0 ? PREFIX_COPY_METHODS : [...PREFIX_COPY_METHODS].reverse();
        for (const method of methods) {
          await target.truncate(0);
          const c0 = performance.now();
          await engine.copyPrefix(source, target, tokens, method);
          row.copyMs[method].push(performance.now() - c0);
          if (target.tokens.length !== tokens) throw new Error(`${method} left ${target.tokens.length} tokens`);
        }
      }
      source.dispose();
      target.dispose();
    }
    return row;
  } finally {
    for (const s of cold) s.dispose();
    await engine.dispose();
  }
}

/** Alternate which method meets a cold sequence first. */
const copy0Order = (rep: number) => (rep % 2 === 0 ? PREFIX_COPY_METHODS : [...PREFIX_COPY_METHODS].reverse());

interface IndexRow {
  blockTokens: number;
  cachedTokens: number;
  bytesPer1k: number;
  hashMsPer1k: number;
}

/** A collectable heap: the bench asks V8 for its gc, as `node --expose-gc` would. */
function gc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** `holders` conversations of `tokensEach` tokens, none sharing a block: the index's cost per token held. */
function measureIndex(blockTokens: number, holders: number, tokensEach: number): IndexRow {
  const collect = gc();
  const root = tenantChainRoot({ tenant: "bench", bytes: randomBytes(32) }, "bench-model");
  const prompts = Array.from({ length: holders }, (_, h) =>
    Array.from({ length: tokensEach }, (_, i) => (h * 7919 + i * 31 + ((i * i) % 97)) % 100_000),
  );
  collect();
  const before = process.memoryUsage().heapUsed;
  const index = new SharedPrefixIndex<{ kind: "live"; sessionId: string }>(1 << 22);
  const t0 = performance.now();
  for (const [h, prompt] of prompts.entries()) {
    index.hold(
      `live\u0000bench\u0000${h}`,
      { kind: "live", sessionId: `s${h}` },
      blockChain(root, prompt, blockTokens),
    );
  }
  const hashMs = performance.now() - t0;
  collect();
  const bytes = process.memoryUsage().heapUsed - before;
  const cached = holders * tokensEach;
  if (index.stats().blocks !== holders * Math.floor(tokensEach / blockTokens)) throw new Error("blocks shared");
  return {
    blockTokens,
    cachedTokens: cached,
    bytesPer1k: (bytes / cached) * 1000,
    hashMsPer1k: (hashMs / cached) * 1000,
  };
}

const perK = (ms: number, tokens: number) => (ms / tokens) * 1000;

export const prefixCopyWorkload: Workload = {
  name: "prefix-copy",
  needsStack: false,
  async run({ options, progress }) {
    const summary: SummaryRow[] = [];
    const lines = [
      "## Prefix copy vs prefill (in process)",
      "",
      "| tokens | KV cells per sequence | prefill ms per 1k tokens | sequence copy ms per 1k tokens | state restore ms per 1k tokens | prefill / sequence copy | prefill / state restore | first copy into a cold sequence, ms: sequence copy / state restore |",
      "|---|---|---|---|---|---|---|---|",
    ];
    for (const tokens of options.restoreSizes) {
      const contextSize = options.contextSize;
      progress(`prefix-copy: sequence copy, state restore and prefill of ${tokens} tokens (${contextSize} cells)`);
      const r = await measureCopies(options, tokens, Math.max(contextSize, tokens + 256));
      const prefill = perK(median(r.prefillMs), tokens);
      const seq = perK(median(r.copyMs["sequence-copy"]), tokens);
      const state = perK(median(r.copyMs["state-restore"]), tokens);
      const prefillOf = (copy: number) => r.prefillMs[Math.floor(copy / COPIES)] ?? Number.NaN;
      const bySeq = ratioSpread(
        r.copyMs["sequence-copy"].map((c, i) => prefillOf(i) / c),
        0,
      );
      const byState = ratioSpread(
        r.copyMs["state-restore"].map((c, i) => prefillOf(i) / c),
        0,
      );
      lines.push(
        `| ${tokens} | ${Math.max(contextSize, tokens + 256)} | ${fmt(prefill)} | **${fmt(seq, 2)}** | ${fmt(state, 2)} | ${bySeq.value} | ${byState.value} | ${fmt(median(r.coldMs["sequence-copy"]), 1)} / ${fmt(median(r.coldMs["state-restore"]), 1)} |`,
      );
      const spreadOf = (ms: number[]) =>
        ms.length < 2
          ? "n=1"
          : `${fmt(perK(Math.min(...ms), tokens), 2)}–${fmt(perK(Math.max(...ms), tokens), 2)} (n=${ms.length})`;
      summary.push(
        {
          workload: "prefix copy",
          measure: `sequence copy ms per 1k tokens at ${tokens} tokens`,
          value: `${fmt(seq, 2)} ms`,
          spread: `${spreadOf(r.copyMs["sequence-copy"])}; prefill ${fmt(prefill)} ms per 1k (${bySeq.value} the copy); first into a cold sequence ${fmt(median(r.coldMs["sequence-copy"]), 1)} ms`,
        },
        {
          workload: "prefix copy",
          measure: `state restore ms per 1k tokens at ${tokens} tokens`,
          value: `${fmt(state, 2)} ms`,
          spread: `${spreadOf(r.copyMs["state-restore"])}; prefill ${fmt(prefill)} ms per 1k (${byState.value} the restore); first into a cold sequence ${fmt(median(r.coldMs["state-restore"]), 1)} ms`,
        },
      );
    }
    lines.push(
      "",
      "Each repetition prefills a fresh prompt into one sequence (the prefill column), copies all of it into a second sequence once each way untimed (the first copy into a sequence's cells pays the page faults of every cell it writes: a one-time cost per sequence), then " +
        String(COPIES) +
        " times each way, alternating which goes first; medians over all copies. The last column: before those, one copy each way into a sequence never written (one per repetition, medians): host memory is mapped on first write, so the sequence copy's first copy into a sequence faults in all its cells (once per sequence: native/sequence-copy/README.md). The sequence copy is llama.cpp's `llama_memory_seq_cp` through the binding in `native/sequence-copy/`: with one KV stream per sequence it copies the whole source stream (every cell of the sequence, used or not) and decodes the prefix's last token again, so its cost grows with the cells per sequence, not with the tokens copied; the state restore saves the source to `/dev/shm`, loads it into the target and cuts it, so its cost grows with the source's tokens.",
      "",
      "## Shared-prefix index: memory and hashing per 1k cached tokens",
      "",
      "| block tokens | tokens indexed | heap bytes per 1k tokens | chain hashing ms per 1k tokens |",
      "|---|---|---|---|",
    );
    const holders = options.quick ? 20 : 200;
    for (const blockTokens of [64, 256]) {
      progress(`prefix-copy: index memory at blocks of ${blockTokens}`);
      const r = measureIndex(blockTokens, holders, 8192);
      lines.push(`| ${blockTokens} | ${r.cachedTokens} | **${fmt(r.bytesPer1k, 0)}** | ${fmt(r.hashMsPer1k, 3)} |`);
      summary.push({
        workload: "shared-prefix index",
        measure: `heap bytes per 1k cached tokens, blocks of ${blockTokens}`,
        value: `${fmt(r.bytesPer1k, 0)} B`,
        spread: `n=1 (${r.cachedTokens} tokens in ${holders} distinct conversations); chain hashing ${fmt(r.hashMsPer1k, 3)} ms per 1k tokens`,
      });
    }
    lines.push(
      "",
      `${holders} conversations of 8192 tokens, no block shared, held by the index (\`gpu-worker/continuation/shared-prefix/\`); the heap measured after a full gc before and after. The worker's default is blocks of 256 tokens and at most 65,536 blocks (FRONTIER_PREFIX_INDEX_BLOCKS): ~16.8M tokens indexed.`,
      "",
    );
    return { summary, section: lines.join("\n") };
  },
};
