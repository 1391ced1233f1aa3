/**
 * `npm run bench -- --only sim [--trace FILE] [--workers 1,4,16,64] [--json OUT] [--rates …]`: the
 * pool at scale, by simulation (pool-sim.ts) of a whole request trace, Frontier's placement against
 * round-robin and least-loaded, and llama-server's slots and host prompt cache (llama-server-sim.ts).
 * No stack, no model. `--quick` simulates the first 600 requests at 1
 * and 4 workers. Writes `sim-pool.svg` next to the report (docs/bench/sim-pool.svg on a recorded run).
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { defaultTracePath, infiniteCacheCeiling, readTrace } from "../trace/trace-file.ts";
import type { Workload, WorkloadResult } from "../workload.ts";
import { capacityCeiling } from "./capacity-ceiling.ts";
import { type CostModel, MEASURED_TINY_CPU, parseRates } from "./cost-model.ts";
import { simulateLlamaServer } from "./llama-server-sim.ts";
import { simulate } from "./pool-sim.ts";
import { type ChartPoint, simChart } from "./sim-chart.ts";
import { SIM_POLICIES, type SimResult } from "./sim-result.ts";
import type { WorkerCapacity } from "./sim-worker.ts";
import { deriveSessions, type SimRequest } from "./trace-sessions.ts";

export const DEFAULT_CAPACITY: WorkerCapacity = {
  sequences: 8,
  contextTokens: 131_072,
  checkpointTokens: 2_000_000,
  maxQueue: 64,
  anchorMinTokens: 512,
};

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

export interface SimRow {
  policy: string;
  workers: number;
  hitRate: number;
  hitRateWithOutput: number;
  ceiling: number;
  ttftMs: { p50: number; p90: number; p99: number };
  refused: number;
  served: number;
  /** Max / mean engine busy time across workers. */
  busyImbalance: number;
  requestImbalance: number;
  engineUtilisation: number;
  limit: string;
  result: Omit<SimResult, "ttftMs" | "queueMs">;
}

/** What bounds a run, read from its counters (the first rule that applies). */
export function limitOf(r: SimResult, utilisation: number, hitRate: number, ceiling: number): string {
  if (r.refused > 0.01 * r.requests)
    return `prefill compute: queues full, ${((r.refused / r.requests) * 100).toFixed(0)}% refused`;
  if (utilisation > 0.8) return `prefill compute (busiest engine ${(utilisation * 100).toFixed(0)}% busy)`;
  if (r.evictions > 0 && hitRate < 0.9 * ceiling) return "checkpoint capacity (evictions)";
  if (hitRate < 0.9 * ceiling) return "placement/parking (reuse below the ceiling)";
  return "the trace's own reuse (at the ceiling)";
}

export function summarise(r: SimResult, ceiling: number): SimRow {
  const busy = r.perWorkerBusyMs;
  const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const hitRate = r.inputTokens === 0 ? 0 : r.reusedTokens / r.inputTokens;
  const utilisation = Math.max(...busy) / Math.max(1, r.durationMs);
  const { ttftMs, queueMs, ...rest } = r;
  return {
    policy: r.policy,
    workers: r.workers,
    hitRate,
    hitRateWithOutput: r.inputTokens === 0 ? 0 : r.reusedWithOutput / r.inputTokens,
    ceiling,
    ttftMs: { p50: percentile(ttftMs, 0.5), p90: percentile(ttftMs, 0.9), p99: percentile(ttftMs, 0.99) },
    refused: r.refused,
    served: r.served,
    busyImbalance: Math.max(...busy) / Math.max(1e-9, mean(busy)),
    requestImbalance: Math.max(...r.perWorkerRequests) / Math.max(1e-9, mean(r.perWorkerRequests)),
    engineUtilisation: utilisation,
    limit: limitOf(r, utilisation, hitRate, ceiling),
    result: rest,
  };
}

export function runSimulation(
  requests: readonly SimRequest[],
  workerCounts: readonly number[],
  capacity: WorkerCapacity,
  cost: CostModel,
  progress: (message: string) => void = () => {},
): SimRow[] {
  const rows: SimRow[] = [];
  for (const workers of workerCounts) {
    const ceiling = capacityCeiling(
      requests,
      workers * (capacity.sequences * capacity.contextTokens + capacity.checkpointTokens),
    );
    for (const policy of SIM_POLICIES) {
      const started = Date.now();
      const result =
        policy === "llama-server"
          ? simulateLlamaServer(requests, { servers: workers, capacity, cost })
          : simulate(requests, { workers, policy, capacity, cost, heartbeatMs: 2000 });
      rows.push(summarise(result, ceiling));
      progress(`sim: ${workers} workers, ${policy}: ${Date.now() - started} ms`);
    }
  }
  return rows;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const copies = (r: SimRow) =>
  r.policy === "llama-server"
    ? `slots by prefix ${r.result.slotsByPrefix}, host cache loads ${r.result.hostCacheLoads}`
    : `${r.result.sharedFromLive} / ${r.result.sharedFromCheckpoint}`;
const secs = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

export function simTable(rows: readonly SimRow[]): string {
  const head =
    "| workers | policy | hit rate | of ceiling | with own output | capacity ceiling | prefilled tokens | TTFT p50 / p90 / p99 | refused | shared-prefix copies (live / checkpoint) | busy max/mean | requests max/mean | limit |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|";
  const body = rows.map(
    (r) =>
      `| ${r.workers} | ${r.policy} | ${pct(r.hitRate)} | ${pct(r.hitRate / Math.max(1e-9, r.ceiling))} | ${pct(r.hitRateWithOutput)} | ${pct(r.ceiling)} | ${r.result.prefilledTokens.toLocaleString("en-US")} | ${secs(r.ttftMs.p50)} / ${secs(r.ttftMs.p90)} / ${secs(r.ttftMs.p99)} | ${r.refused} | ${copies(r)} | ${r.busyImbalance.toFixed(2)} | ${r.requestImbalance.toFixed(2)} | ${r.limit} |`,
  );
  return [head, ...body].join("\n");
}

const { values } = parseArgs({
  args: process.argv.slice(2),
  strict: false,
  options: {
    trace: { type: "string" },
    workers: { type: "string" },
    json: { type: "string" },
    rates: { type: "string" },
  },
});

export const simWorkload: Workload = {
  name: "sim",
  needsStack: false,
  async run({ options, progress }): Promise<WorkloadResult> {
    const tracePath = typeof values.trace === "string" ? values.trace : defaultTracePath();
    const quick = options.quick;
    const workerCounts = (typeof values.workers === "string" ? values.workers : quick ? "1,4" : "1,4,16,64")
      .split(",")
      .map(Number);
    if (workerCounts.some((n) => !Number.isSafeInteger(n) || n <= 0))
      throw new Error(`--workers: not a list of positive integers`);
    const cost = typeof values.rates === "string" ? parseRates(values.rates) : MEASURED_TINY_CPU;
    const trace = readTrace(tracePath);
    const slice = quick ? trace.slice(0, 600) : trace;
    const requests = deriveSessions(slice);
    const infinite = infiniteCacheCeiling(slice);
    const followUps = requests.filter((r) => r.parent >= 0).length;
    progress(`sim: ${requests.length} requests (${followUps} follow-ups), workers ${workerCounts.join(",")}`);
    const rows = runSimulation(requests, workerCounts, DEFAULT_CAPACITY, cost, progress);
    const caption = `${requests.length} requests of ${tracePath.split("/").pop()}; ${DEFAULT_CAPACITY.sequences} sequences × ${DEFAULT_CAPACITY.contextTokens} tokens + ${DEFAULT_CAPACITY.checkpointTokens} checkpoint tokens per worker`;
    const points: ChartPoint[] = rows.map((r) => ({
      policy: r.policy as ChartPoint["policy"],
      workers: r.workers,
      hitRate: r.hitRate,
      ttftP90Ms: r.ttftMs.p90,
      ceiling: r.ceiling,
    }));
    const svg = simChart(points, caption);
    if (typeof values.json === "string") {
      writeFileSync(
        values.json,
        `${JSON.stringify({ trace: { path: tracePath, requests: requests.length, follow_ups: followUps, ceiling_reuse: infinite }, capacity: DEFAULT_CAPACITY, cost, rows }, null, 2)}\n`,
      );
    }
    const largest = Math.max(...workerCounts);
    const at = (policy: string) => rows.find((r) => r.workers === largest && r.policy === policy);
    const frontier = at("frontier");
    const llama = at("llama-server");
    const versus = (row: SimRow) =>
      `${pct(row.hitRate)} (${pct(row.hitRate / Math.max(1e-9, row.ceiling))} of the ceiling), ${row.result.prefilledTokens.toLocaleString("en-US")} prefilled, TTFT p50 / p90 ${secs(row.ttftMs.p50)} / ${secs(row.ttftMs.p90)}, ${row.refused} refused`;
    const summary = frontier
      ? [
          {
            workload: "pool simulation",
            measure: `hit rate vs capacity-bound ceiling at ${largest} workers (Frontier placement)`,
            value: `${pct(frontier.hitRate)} of ${pct(frontier.ceiling)}`,
            spread: `${pct(frontier.hitRate / Math.max(1e-9, frontier.ceiling))} of the ceiling; round-robin ${pct(at("round-robin")?.hitRate ?? 0)}, least-loaded ${pct(at("least-loaded")?.hitRate ?? 0)}; ${requests.length} requests`,
          },
          {
            workload: "pool simulation",
            measure: `TTFT p90 at ${largest} workers (Frontier / round-robin / least-loaded)`,
            value: `${secs(frontier.ttftMs.p90)} / ${secs(at("round-robin")?.ttftMs.p90 ?? 0)} / ${secs(at("least-loaded")?.ttftMs.p90 ?? 0)}`,
            spread: `virtual time, one deterministic run; llama-server ${secs(llama?.ttftMs.p90 ?? 0)}`,
          },
          ...(llama
            ? [
                {
                  workload: "pool simulation",
                  measure: `hit rate at ${largest} workers, Frontier vs llama-server`,
                  value: `${pct(frontier.hitRate)} vs ${pct(llama.hitRate)}`,
                  spread: `Frontier ${versus(frontier)}; llama-server ${versus(llama)}`,
                },
              ]
            : []),
        ]
      : [];
    const section = [
      "## Pool at scale, by simulation",
      "",
      `Trace \`${tracePath}\`: ${requests.length} requests, ${followUps} follow-up turns (a request whose hash ids start with every full block of an earlier one, past the shared system block); infinite-cache ceiling ${pct(infinite)}.`,
      `Per worker: ${DEFAULT_CAPACITY.sequences} sequences × ${DEFAULT_CAPACITY.contextTokens} tokens of live KV, ${DEFAULT_CAPACITY.checkpointTokens} tokens of checkpoints, a queue of ${DEFAULT_CAPACITY.maxQueue}. Costs: prefill ${cost.prefillTokensPerSecond} tok/s, decode ${cost.decodeTokensPerSecond} tok/s per sequence, restore ${cost.restoreTokensPerSecond} tok/s (${cost.source}).`,
      `Copy rate (shared prefixes from a resident sequence) ${cost.copyTokensPerSecond} tok/s. llama-server: ${DEFAULT_CAPACITY.sequences} slots × ${DEFAULT_CAPACITY.contextTokens} tokens per server, host prompt cache of ${DEFAULT_CAPACITY.checkpointTokens} tokens, conversation-sticky round-robin in front.`,
      "Hit rate counts whole trace blocks (the ceiling's reading); `with own output` also counts a live or restored session's previous output when the follow-up is long enough to contain it. TTFT is over served requests.",
      "",
      simTable(rows),
      "",
    ].join("\n");
    return { summary, section, files: { "sim-pool.svg": svg } };
  },
};
