/**
 * Many sessions on one worker, measured in process on the real engine and checkpoint store:
 * checkpoint restore vs re-prefill of the same tokens, aggregate decode throughput at 1/2/4/8
 * concurrent sessions (one context, shared batches), checkpoint bytes per token and worker memory
 * per resident session.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CheckpointStore } from "../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import { createEngine } from "../../native/engine.ts";
import { type Engine, type EngineSequence, GREEDY, type Token } from "../../native/engine-types.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import type { Workload } from "../workload.ts";

/** The bench tenant's data key: checkpoints are sealed at rest, as in the worker. */
const BENCH_KEY = { tenant: "bench", bytes: randomBytes(32) };

const TEXT = "The agent reads the tool result, updates its plan and calls the next tool with care. ";

function promptOf(engine: Engine, tokens: number, salt: string): Token[] {
  let out: Token[] = engine.tokenize(`${salt} `, { special: false });
  while (out.length < tokens) out = out.concat(engine.tokenize(TEXT, { special: false }));
  return out.slice(0, tokens);
}

async function decode(sequence: EngineSequence, tokens: number): Promise<number> {
  let n = 0;
  for await (const _ of sequence.generate({ ...GREEDY, maxTokens: tokens })) n++;
  return n;
}

export interface SessionsReport {
  restoreTokens: number;
  prefillMs: number[];
  restoreMs: number[];
  bytesPerToken: number;
  decode: { sessions: number; tokensPerSecond: number }[];
  kvBytesPerSequence: number;
  rssPerResidentSession: number;
}

export async function benchSessions(
  modelPath: string,
  restoreTokens: number,
  reps: number,
  gpu: "auto" | false,
): Promise<SessionsReport> {
  const maxSessions = 8;
  const engine = await createEngine({
    modelPath,
    contextSize: restoreTokens + 256,
    sequences: maxSessions,
    threads: Number(process.env.FRONTIER_THREADS || 1),
    gpu,
    flashAttention: process.env.FRONTIER_FLASH_ATTENTION === "on",
    batchSize: 512,
  });
  const dir = mkdtempSync(join(tmpdir(), "frontier-bench-ckpt-"));
  const store = CheckpointStore.open({ dir, budgetBytes: 64 * 1024 ** 3, modelIdentity: engine.model.identity });
  try {
    const report: SessionsReport = {
      restoreTokens,
      prefillMs: [],
      restoreMs: [],
      bytesPerToken: 0,
      decode: [],
      kvBytesPerSequence: 0,
      rssPerResidentSession: 0,
    };
    // Restore vs re-prefill, alternating.
    for (let rep = 0; rep < reps; rep++) {
      const prompt = promptOf(engine, restoreTokens, `rep ${rep}`);
      const a = await engine.acquireSequence();
      let t0 = performance.now();
      await a.append(prompt);
      report.prefillMs.push(performance.now() - t0);
      const meta = await store.write(
        {
          tenant: "bench",
          key: BENCH_KEY,
          sessionId: "",
          reason: "parked",
          toolUseIds: [],
          payload: { text: `rep ${rep}`, tokens: [...a.tokens], extra: null },
        },
        async (path) => {
          await a.saveState(path);
        },
      );
      report.bytesPerToken = meta.bytes / meta.tokenCount;
      a.dispose();
      const b = await engine.acquireSequence();
      t0 = performance.now();
      await store.load(meta, BENCH_KEY, (path, payload) => b.loadState(path, payload.tokens));
      report.restoreMs.push(performance.now() - t0);
      b.dispose();
      store.remove(meta.id);
    }
    // Aggregate decode throughput with N sessions decoding at once.
    const rssBefore = process.memoryUsage().rss;
    for (const n of [1, 2, 4, 8]) {
      const sequences = await Promise.all(Array.from({ length: n }, () => engine.acquireSequence()));
      await Promise.all(sequences.map((s, i) => s.append(promptOf(engine, 64, `session ${i}`))));
      const t0 = performance.now();
      const counts = await Promise.all(sequences.map((s) => decode(s, 48)));
      const seconds = (performance.now() - t0) / 1000;
      report.decode.push({ sessions: n, tokensPerSecond: counts.reduce((x, y) => x + y, 0) / seconds });
      if (n === maxSessions) report.rssPerResidentSession = (process.memoryUsage().rss - rssBefore) / n;
      for (const s of sequences) s.dispose();
    }
    return report;
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
    await engine.dispose();
  }
}

export function sessionsTable(r: SessionsReport): string {
  const prefill = median(r.prefillMs);
  const restore = median(r.restoreMs);
  const base = r.decode[0]?.tokensPerSecond ?? 1;
  return [
    `| ${r.restoreTokens} tokens | re-prefill ms | checkpoint restore ms (checksum + load) | re-prefill / restore |`,
    "|---|---|---|---|",
    `| median of ${r.prefillMs.length} | ${fmt(prefill)} | ${fmt(restore)} | **${(prefill / restore).toFixed(1)}x** |`,
    "",
    `Checkpoint size: ${fmt(r.bytesPerToken, 0)} bytes per token (KV state + payload).`,
    "",
    "| concurrent sessions | aggregate decode tok/s | vs 1 session |",
    "|---|---|---|",
    ...r.decode.map((d) => `| ${d.sessions} | ${fmt(d.tokensPerSecond)} | ${(d.tokensPerSecond / base).toFixed(2)}x |`),
    "",
    `Worker RSS growth per resident session (8 sessions, 64-token prompts + 48 decoded; the KV cache itself is allocated up front for every sequence): ${fmt(r.rssPerResidentSession / 1024, 0)} KiB.`,
  ].join("\n");
}

export const sessionsWorkload: Workload = {
  name: "sessions",
  needsStack: false,
  async run({ options, progress }) {
    progress(
      `sessions (in process): restore vs re-prefill at ${options.restoreTokens} tokens, decode at 1/2/4/8 sessions`,
    );
    const r = await benchSessions(
      options.modelPath,
      options.restoreTokens,
      options.reps,
      options.gpu === "off" ? false : "auto",
    );
    const base = r.decode[0]?.tokensPerSecond ?? Number.NaN;
    const top = r.decode.at(-1);
    return {
      summary: [
        {
          workload: "checkpoint restore",
          measure: `re-prefill / restore at ${r.restoreTokens} tokens`,
          ...ratioSpread(
            r.prefillMs.map((p, i) => p / (r.restoreMs[i] ?? Number.NaN)),
            1,
          ),
        },
        {
          workload: "batched decode",
          measure: `aggregate decode tok/s at ${r.decode.map((d) => d.sessions).join("/")} sessions`,
          value: r.decode.map((d) => fmt(d.tokensPerSecond, 0)).join(" / "),
          spread: top ? `${(top.tokensPerSecond / base).toFixed(2)}x at ${top.sessions} vs 1 (one run each)` : "",
        },
        {
          workload: "memory",
          measure: "worker RSS per resident session; checkpoint bytes per token",
          value: `${fmt(r.rssPerResidentSession / 1024, 0)} KiB; ${fmt(r.bytesPerToken, 0)} B/token`,
          spread: "one run",
        },
      ],
      section: ["## Many sessions on one worker (in process)", "", sessionsTable(r), ""].join("\n"),
    };
  },
};
