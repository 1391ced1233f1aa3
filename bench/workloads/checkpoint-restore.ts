/**
 * Checkpoint restore vs re-prefill of the same tokens, in process on the real engine and store, at
 * each `--restore-tokens` size: a whole-state checkpoint (parking, shutdown) and a chained one (an
 * anchor at half the prompt, then two chunks at 75% and 100%, the shape of a tool loop's checkpoints).
 * Also what each write put on disk and how long it held the sequence plus made itself durable.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointStore } from "../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import type { CheckpointMeta, CheckpointReason } from "../../gpu-worker/checkpoints/store/types.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine, EngineSequence, Token } from "../../native/engine-types.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import type { SummaryRow, Workload } from "../workload.ts";

/** The bench tenant's data key: checkpoints are sealed at rest, as in the worker. */
const BENCH_KEY = { tenant: "bench", bytes: randomBytes(32) };

const TEXT = "The agent reads the tool result, updates its plan and calls the next tool with care. ";

function promptOf(engine: Engine, tokens: number, salt: string): Token[] {
  let out: Token[] = engine.tokenize(`${salt} `, { special: false });
  while (out.length < tokens) out = out.concat(engine.tokenize(TEXT, { special: false }));
  return out.slice(0, tokens);
}

interface RestoreRow {
  tokens: number;
  prefillMs: number[];
  wholeMs: number[];
  /** The whole state's first load after the store reopened (its CRC read in full, as after a restart). */
  wholeFirstMs: number[];
  chainedMs: number[];
  /** Of each restore above, the engine's own load of the plain state (llama.cpp); the rest is Frontier's. */
  wholeEngineMs: number[];
  wholeFirstEngineMs: number[];
  chainedEngineMs: number[];
  wholeBytes: number;
  /** The last chunk (25% of the tokens) and its payload. */
  chunkBytes: number;
  wholeWriteMs: number[];
  chunkWriteMs: number[];
}

async function measure(modelPath: string, tokens: number, reps: number, gpu: "auto" | false): Promise<RestoreRow> {
  const engine = await createEngine({
    modelPath,
    contextSize: tokens + 256,
    sequences: 2,
    threads: Number(process.env.FRONTIER_THREADS || 1),
    gpu,
    flashAttention: process.env.FRONTIER_FLASH_ATTENTION === "on",
    batchSize: 512,
  });
  const dir = mkdtempSync(join(tmpdir(), "frontier-bench-restore-"));
  const open = () => CheckpointStore.open({ dir, budgetBytes: 64 * 1024 ** 3, modelIdentity: engine.model.identity });
  let store = open();
  const row: RestoreRow = {
    tokens,
    prefillMs: [],
    wholeMs: [],
    wholeFirstMs: [],
    chainedMs: [],
    wholeEngineMs: [],
    wholeFirstEngineMs: [],
    chainedEngineMs: [],
    wholeBytes: 0,
    chunkBytes: 0,
    wholeWriteMs: [],
    chunkWriteMs: [],
  };
  const save = async (sequence: EngineSequence, reason: CheckpointReason, tag: string, base?: CheckpointMeta) => {
    const t0 = performance.now();
    const meta = await store.write(
      {
        tenant: "bench",
        key: BENCH_KEY,
        sessionId: reason === "cold-anchor" ? "" : `s-${tag.split("c")[0]}`,
        reason,
        toolUseIds: [tag],
        payload: { text: tag, tokens: [...sequence.tokens], extra: null },
        ...(base ? { extends: base.id } : {}),
      },
      async (path) => {
        await sequence.saveState(path);
      },
    );
    written.push(meta.id);
    return { meta, ms: performance.now() - t0 };
  };
  const written: string[] = [];
  /** Restore `meta` into `into`: the whole load's ms and the engine's part of it. */
  const restore = async (meta: CheckpointMeta, into: EngineSequence) => {
    const t0 = performance.now();
    let engineMs = 0;
    await store.load(meta, BENCH_KEY, async (path, payload) => {
      const e0 = performance.now();
      await into.loadState(path, payload.tokens);
      engineMs = performance.now() - e0;
    });
    return { ms: performance.now() - t0, engineMs };
  };
  try {
    for (let rep = 0; rep < reps; rep++) {
      const prompt = promptOf(engine, tokens, `rep ${rep}`);
      const cuts = [0, Math.floor(tokens / 2), Math.floor((tokens * 3) / 4), tokens];
      const a = await engine.acquireSequence();
      let prefill = 0;
      let chained: CheckpointMeta | undefined;
      for (let c = 1; c < cuts.length; c++) {
        const t0 = performance.now();
        await a.append(prompt.slice(cuts[c - 1], cuts[c]));
        prefill += performance.now() - t0;
        const saved = await save(a, c === 1 ? "cold-anchor" : "tool-frontier", `r${rep}c${c}`, chained);
        chained = saved.meta;
        if (c === 3) {
          row.chunkWriteMs.push(saved.ms);
          row.chunkBytes = saved.meta.bytes;
        }
      }
      row.prefillMs.push(prefill);
      const whole = await save(a, "parked", `r${rep}cwhole`);
      row.wholeWriteMs.push(whole.ms);
      row.wholeBytes = whole.meta.bytes;
      a.dispose();
      const b = await engine.acquireSequence();
      // A session parked here and restored on the same worker: the store that wrote the state.
      const same = await restore(whole.meta, b);
      row.wholeMs.push(same.ms);
      row.wholeEngineMs.push(same.engineMs);
      await b.truncate(0);
      // As after a worker restart: a new store instance, nothing of these files in memory.
      store.close();
      store = open();
      for (const [meta, into, engineInto] of [
        [whole.meta, row.wholeFirstMs, row.wholeFirstEngineMs],
        [chained, row.chainedMs, row.chainedEngineMs],
      ] as const) {
        if (!meta) continue;
        const loaded = await restore(meta, b);
        into.push(loaded.ms);
        engineInto.push(loaded.engineMs);
        await b.truncate(0);
      }
      b.dispose();
      for (const id of written.splice(0)) store.remove(id);
    }
    return row;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
    await engine.dispose();
  }
}

const mb = (bytes: number) => `${fmt(bytes / 1024 ** 2)} MB`;

export const checkpointRestoreWorkload: Workload = {
  name: "checkpoint-restore",
  needsStack: false,
  async run({ options, progress }) {
    const lines = [
      "## Checkpoint restore vs re-prefill (in process)",
      "",
      "| tokens | re-prefill ms | restore, whole state ms (same worker: its plain copy in memory) | its first load after a restart ms (decrypted) | restore, chained ms (anchor at 50% + chunks at 75%, 100%) | re-prefill / whole | re-prefill / whole, first load | re-prefill / chained |",
      "|---|---|---|---|---|---|---|---|",
    ];
    const breakdown = [
      "| tokens | restore | total ms | engine: llama.cpp loads the plain state ms | Frontier's own ms (payload, key check, decrypt or cached copy, assembly, index) |",
      "|---|---|---|---|---|",
    ];
    const writes = [
      "| tokens | whole-state write | its time (dump + fsync + index) | last chunk (25% of the tokens) | its time (dump to memory + chunk + fsync) |",
      "|---|---|---|---|---|",
    ];
    const summary: SummaryRow[] = [];
    for (const tokens of options.restoreSizes) {
      progress(`checkpoint-restore: restore vs re-prefill at ${tokens} tokens`);
      const r = await measure(options.modelPath, tokens, options.reps, options.gpu === "off" ? false : "auto");
      const whole = ratioSpread(
        r.prefillMs.map((p, i) => p / (r.wholeMs[i] ?? Number.NaN)),
        0,
      );
      const first = ratioSpread(
        r.prefillMs.map((p, i) => p / (r.wholeFirstMs[i] ?? Number.NaN)),
        0,
      );
      const chained = ratioSpread(
        r.prefillMs.map((p, i) => p / (r.chainedMs[i] ?? Number.NaN)),
        0,
      );
      lines.push(
        `| ${tokens} | ${fmt(median(r.prefillMs))} | ${fmt(median(r.wholeMs))} | ${fmt(median(r.wholeFirstMs))} | ${fmt(median(r.chainedMs))} | **${whole.value}** | **${first.value}** | **${chained.value}** |`,
      );
      for (const [what, total, engine] of [
        ["whole state, same worker", r.wholeMs, r.wholeEngineMs],
        ["whole state, first load after a restart", r.wholeFirstMs, r.wholeFirstEngineMs],
        ["chained", r.chainedMs, r.chainedEngineMs],
      ] as const) {
        const own = total.map((ms, i) => ms - (engine[i] ?? Number.NaN));
        breakdown.push(
          `| ${tokens} | ${what} | ${fmt(median(total))} | ${fmt(median(engine))} | ${fmt(median(own))} |`,
        );
      }
      writes.push(
        `| ${tokens} | ${mb(r.wholeBytes)} | ${fmt(median(r.wholeWriteMs))} ms | ${mb(r.chunkBytes)} | ${fmt(median(r.chunkWriteMs))} ms |`,
      );
      summary.push(
        { workload: "checkpoint restore", measure: `re-prefill / restore (whole state) at ${tokens} tokens`, ...whole },
        {
          workload: "checkpoint restore",
          measure: `re-prefill / restore (whole state, first load after a restart: decrypted) at ${tokens} tokens`,
          ...first,
        },
        { workload: "checkpoint restore", measure: `re-prefill / restore (chained) at ${tokens} tokens`, ...chained },
      );
    }
    lines.push(
      "",
      "Where a restore's time goes (medians):",
      "",
      ...breakdown,
      "",
      "Checkpoints are sealed (AES-256-GCM under the tenant's data key). A restore on the worker that wrote or already loaded a state links its plain copy kept in memory (gpu-worker/checkpoints/store/plain-state-cache.ts) once the key has opened the sealed header; the first load after a restart (or of a file another worker wrote) decrypts it, every tag checked before the engine reads a byte, and keeps the plain copy for the next restore.",
      "",
      ...writes,
      "",
    );
    return { summary, section: lines.join("\n") };
  },
};
