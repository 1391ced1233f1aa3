/**
 * Placement hit rate: a pooled stack of two workers (heartbeats, one shared checkpoint directory)
 * receives new sessions whose system prompts repeat across a few "agents". A new session whose
 * prefix a worker already advertises should land on that worker (a hit) while it has room; the
 * first turn then starts from that worker's anchor checkpoint instead of a cold prefill.
 * Reports the PoolDO's own counters and what the sessions saw (route and cache headers).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PREFIX_LOAD_MARGIN } from "../../edge/pool/placement.ts";
import { startStack } from "../../scripts/stack.ts";
import type { BenchOptions, Workload, WorkloadResult } from "../workload.ts";

const ADMIN_TOKEN = process.env.FRONTIER_ADMIN_TOKEN || "frontier-dev-admin-token-change-me";

export interface PlacementReport {
  sessions: number;
  prefixes: number;
  /** PoolDO counters: placements, of which the prefix was advertised somewhere, of which placed on a holder. */
  placements: number;
  prefixKnown: number;
  prefixHits: number;
  /** First turns served from an anchor checkpoint (decision=checkpoint). */
  fromCheckpoint: number;
  /** Sessions per worker id. */
  perWorker: Record<string, number>;
}

interface AdminWorker {
  id: string;
  url: string;
  residentSessions: number;
}

interface AdminView {
  regions: { placement: { placements: number; prefixKnown: number; prefixHits: number }; workers: AdminWorker[] }[];
}

/** Start a 2-worker pooled stack, place `sessions` new sessions over `prefixes` system prompts, read the counters. */
export async function benchPlacement(
  options: Pick<BenchOptions, "modelPath" | "quick">,
  progress: (message: string) => void,
): Promise<PlacementReport> {
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-bench-placement-"));
  const sessions = options.quick ? 8 : 24;
  const prefixes = options.quick ? 2 : 4;
  progress(`placement: 2 pooled workers, ${sessions} new sessions over ${prefixes} prefixes`);
  const stack = await startStack({
    workers: 2,
    edgeStateDir: join(stateDir, "edge"),
    sharedCheckpointDir: join(stateDir, "checkpoints"),
    workerEnv: {
      FRONTIER_MODEL_PATH: options.modelPath,
      FRONTIER_CONTEXT_SIZE: "4096",
      FRONTIER_SEQUENCES: "4",
      FRONTIER_ANCHOR_MIN_TOKENS: "64",
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
    },
    verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
  });
  try {
    const admin = async (): Promise<AdminView> => {
      const res = await fetch(`${stack.edgeUrl}/admin/workers`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return (await res.json()) as AdminView;
    };
    // Both workers have registered (their heartbeat ids replace the static entries' URLs).
    for (let i = 0; i < 200; i++) {
      const ids = (await admin()).regions.flatMap((r) => r.workers.map((w) => w.id));
      if (ids.filter((id) => id.startsWith("worker-")).length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    let fromCheckpoint = 0;
    for (let i = 0; i < sessions; i++) {
      const agent = i % prefixes;
      const system = `You are agent ${agent} of the placement benchmark. ${"Follow the house rules carefully. ".repeat(8)}`;
      const res = await fetch(`${stack.edgeUrl}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "sk-frontier-local" },
        body: JSON.stringify({ model: "m", max_tokens: 1, system, messages: [{ role: "user", content: `Task ${i}` }] }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`placement session ${i}: HTTP ${res.status}`);
      if (res.headers.get("x-frontier-cache")?.includes("decision=checkpoint")) fromCheckpoint++;
      // Let a heartbeat (every 500 ms here) carry the prefixes the workers now hold.
      await new Promise((r) => setTimeout(r, 600));
    }
    const view = await admin();
    const counters = view.regions.map((r) => r.placement);
    const perWorker: Record<string, number> = {};
    for (const w of view.regions.flatMap((r) => r.workers))
      if (w.id.startsWith("worker-")) perWorker[w.id] = w.residentSessions;
    return {
      sessions,
      prefixes,
      placements: sum(counters.map((c) => c.placements)),
      prefixKnown: sum(counters.map((c) => c.prefixKnown)),
      prefixHits: sum(counters.map((c) => c.prefixHits)),
      fromCheckpoint,
      perWorker,
    };
  } finally {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

const pct = (part: number, whole: number) => (whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(0)}%`);

export function placementSection(r: PlacementReport): string {
  return [
    "## Placement hit rate (two pooled workers, 4 sequences each)",
    "",
    "| measure | value |",
    "|---|---|",
    `| new sessions / distinct system prompts | ${r.sessions} / ${r.prefixes} |`,
    `| placements whose prefix a worker advertised | ${r.prefixKnown} of ${r.placements} |`,
    `| **placement hit rate** (of those, placed on a holder) | **${pct(r.prefixHits, r.prefixKnown)}** (${r.prefixHits}/${r.prefixKnown}) |`,
    `| first turns started from an anchor checkpoint | ${r.fromCheckpoint} of ${r.sessions} |`,
    `| resident sessions per worker at the end | ${Object.entries(r.perWorker)
      .map(([id, n]) => `${id}: ${n}`)
      .join(", ")} |`,
    "",
    "A holder is preferred while it can start the session at once (nothing queued, fewer turns running or just placed",
    "than sequences: an idle resident session is parked to make room) and, when all its sequences hold sessions, is",
    `within ${PREFIX_LOAD_MARGIN} sessions per sequence of the least loaded worker; otherwise the least loaded worker takes`,
    "the session (and, sharing the checkpoint directory, can still load the anchor). The pool records a placed session's",
    "prefix for its worker at once, so a new session does not wait for that worker's next heartbeat to find it.",
  ].join("\n");
}

export const placementWorkload: Workload = {
  name: "placement",
  needsStack: false,
  async run({ options, progress }): Promise<WorkloadResult> {
    const report = await benchPlacement(options, progress);
    return {
      summary: [
        {
          workload: "placement",
          measure: "new sessions placed on the worker holding their prefix (when one advertised it)",
          value: pct(report.prefixHits, report.prefixKnown),
          spread: `${report.prefixHits}/${report.prefixKnown} (n=${report.sessions})`,
        },
      ],
      section: placementSection(report),
    };
  },
};
