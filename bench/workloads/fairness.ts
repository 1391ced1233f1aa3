/**
 * Tenant fairness (issue 30, M1): tenant B's time to first token on one worker, unloaded and
 * while tenant A fires a burst of long generations (12 by default, three times the worker's 4
 * sequences), measured in the same run on a stack of its own (two tenants' API keys, default
 * tenant limits). The claim: B's loaded TTFT stays within 3x of its unloaded TTFT.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../edge/tenancy/auth.ts";
import { startStack } from "../../scripts/stack.ts";
import { DEV_DIGESTS } from "../../shared/dev-secrets.ts";
import { BENCH_KEY, streamTurn } from "../clients/edge-client.ts";
import { fmt, percentile } from "../stats.ts";
import type { BenchOptions, Workload, WorkloadResult } from "../workload.ts";

const TENANT_B_KEY = "sk-frontier-bench-tenant-b";
/** Tenant B's pause between its turns (an interactive user reading the answer). */
const THINK_MS = 1000;
/** Fields of tenant A's forced call: 32 characters each, about 40 tokens a field with its key. */
const LONG_CALL_FIELDS = 40;

export interface FairnessReport {
  burst: number;
  burstTokens: number;
  sequences: number;
  unloadedMs: number[];
  loadedMs: number[];
  /** Wall time of A's whole burst, and how many of A's turns finished inside B's measurements. */
  burstMs: number;
}

export async function benchFairness(options: BenchOptions, progress: (m: string) => void): Promise<FairnessReport> {
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-bench-fairness-"));
  const sequences = 4;
  const burst = options.quick ? 6 : 12;
  const burstTokens = options.quick ? 200 : 1500;
  const samples = options.quick ? 2 : 5;
  const stack = await startStack({
    edgeStateDir: join(stateDir, "edge"),
    edgeVars: {
      API_KEYS: JSON.stringify({ [DEV_DIGESTS.apiKey]: "tenant-a", [await sha256Hex(TENANT_B_KEY)]: "tenant-b" }),
    },
    workerEnv: {
      FRONTIER_MODEL_PATH: options.modelPath,
      FRONTIER_CONTEXT_SIZE: "4096",
      FRONTIER_SEQUENCES: String(sequences),
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
    },
    verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
  });
  const b = { "x-api-key": TENANT_B_KEY };
  const ask = (n: number, key: Record<string, string>, maxTokens: number, text: string) =>
    streamTurn(
      stack.edgeUrl,
      { model: "m", max_tokens: maxTokens, temperature: 1, messages: [{ role: "user", content: text }] },
      `fair-${n}-${crypto.randomUUID()}`,
      key,
    );
  try {
    await ask(0, b, 1, "warm up");
    const unloadedMs: number[] = [];
    for (let i = 0; i < samples; i++) {
      unloadedMs.push((await ask(i, b, 8, `tenant b, quiet ${i}`)).firstBlockMs);
      await new Promise((resolve) => setTimeout(resolve, THINK_MS));
    }
    progress(
      `fairness: B unloaded TTFT p50 ${fmt(percentile(unloadedMs, 50))} ms; A fires ${burst} x ${burstTokens} tokens`,
    );
    const started = performance.now();
    // A forced call of many fixed-length strings: the grammar keeps the random model generating
    // for the whole budget (a plain answer from it may end at an early end-of-turn token).
    const properties = Object.fromEntries(
      Array.from({ length: LONG_CALL_FIELDS }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
    );
    const long = (i: number) =>
      streamTurn(
        stack.edgeUrl,
        {
          model: "m",
          max_tokens: burstTokens,
          temperature: 1,
          tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
          tool_choice: { type: "tool", name: "essay" },
          messages: [{ role: "user", content: `tenant a, long ${i}` }],
        },
        `fair-a-${i}-${crypto.randomUUID()}`,
        { "x-api-key": BENCH_KEY },
      ).catch((e: unknown) => e);
    const a = Array.from({ length: burst }, (_, i) => long(i));
    // Let A's burst take every sequence and fill the queue before B arrives.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const loadedMs: number[] = [];
    for (let i = 0; i < samples; i++) {
      loadedMs.push((await ask(200 + i, b, 8, `tenant b, busy ${i}`)).firstBlockMs);
      await new Promise((resolve) => setTimeout(resolve, THINK_MS)); // B reads its answer before the next turn
    }
    await Promise.all(a);
    return { burst, burstTokens, sequences, unloadedMs, loadedMs, burstMs: performance.now() - started };
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export const fairnessWorkload: Workload = {
  name: "fairness",
  needsStack: false,
  async run({ options, progress }): Promise<WorkloadResult> {
    const r = await benchFairness(options, progress);
    const unloaded = percentile(r.unloadedMs, 50);
    const loaded = percentile(r.loadedMs, 50);
    const ratio = loaded / unloaded;
    return {
      summary: [
        {
          workload: "fairness",
          measure: `tenant B's TTFT while tenant A runs ${r.burst} long generations on ${r.sequences} sequences, vs unloaded (goal ≤ 3x)`,
          value: `${ratio.toFixed(2)}x`,
          spread: `${fmt(loaded)} vs ${fmt(unloaded)} ms p50; worst ${fmt(Math.max(...r.loadedMs))} ms (n=${r.loadedMs.length})`,
        },
      ],
      section: [
        "## Tenant fairness",
        "",
        `One worker, ${r.sequences} sequences, default tenant limits. Tenant A sends ${r.burst} streaming`,
        `generations of ${r.burstTokens} tokens at once; 1.5 s later tenant B sends ${r.loadedMs.length} short turns, one`,
        "after another. B's time to first content block, unloaded (before the burst) and loaded:",
        "",
        "| B's TTFT | p50 ms | max ms | samples (ms) |",
        "| --- | --- | --- | --- |",
        `| unloaded | ${fmt(unloaded)} | ${fmt(Math.max(...r.unloadedMs))} | ${r.unloadedMs.map((v) => fmt(v)).join(", ")} |`,
        `| during A's burst | ${fmt(loaded)} | ${fmt(Math.max(...r.loadedMs))} | ${r.loadedMs.map((v) => fmt(v)).join(", ")} |`,
        "",
        `Ratio ${ratio.toFixed(2)}x (goal ≤ 3x). A's burst took ${fmt(r.burstMs / 1000)} s.`,
        "",
      ].join("\n"),
    };
  },
};
