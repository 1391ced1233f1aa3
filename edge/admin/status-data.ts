/**
 * The status page's data (GET /admin/status.json): every pool and worker as the PoolDOs hold them,
 * each reachable worker's own Health and Stats (sessions, checkpoint store use), the cache hit rate
 * and latest turns from the EdgeMetricsDO, and usage: today's per tenant, per day over the console's
 * window (console/usage-days.ts) and each key's totals.
 */
import type { RecentTurn } from "../metrics/edge-metrics-do.ts";
import { metricsStub } from "../metrics/record.ts";
import type { PoolWorker } from "../pool/placement.ts";
import { poolStub, poolView } from "../pool/pool-client.ts";
import { registryStub } from "../tenancy/registry/registry-do.ts";
import { dayOf } from "../tenancy/usage-do.ts";
import { capabilityHeaders, workerScope } from "../worker/worker-capability.ts";
import { workerClient } from "../worker/worker-client.ts";
import { rpcErrorToApiError } from "../worker/worker-errors.ts";
import type { AdminContext } from "./bindings.ts";
import { keyTotals, usageDays, usageToday, usageWindow } from "./console/usage-days.ts";
import { knownTenants, usageOf } from "./usage.ts";

const WORKER_RPC_TIMEOUT_MS = 2000;
const LATEST_MISSES = 10;

/** What the worker itself says (Health + Stats), or why it could not be asked. */
type WorkerSelf =
  | {
      reachable: true;
      ready: boolean;
      model: string;
      /** The engine build it loaded (prebuilt or local, CPU or CUDA, llama.cpp release). */
      build: string;
      contextSize: number;
      sequencesTotal: number;
      sequencesFree: number;
      liveSessions: number;
      parkedSessions: number;
      activeRequests: number;
      queuedRequests: number;
      checkpoints: number;
      checkpointBytes: number;
      checkpointHits: number;
      checkpointMisses: number;
    }
  | { reachable: false; error: string };

export async function statusData(rc: AdminContext) {
  const now = Date.now();
  const span = usageWindow(now);
  const [workers, counters, recent, usage, prices] = await Promise.all([
    poolView(rc.env, rc.config, true),
    metricsStub(rc.env).samples(),
    metricsStub(rc.env).recentTurns(),
    knownTenants(rc).then((tenants) => usageOf(rc, tenants, span)),
    registryStub(rc.env).prices(),
  ]);
  const selves = await Promise.all(workers.map((w) => askWorker(rc, w)));
  const pools = await Promise.all(
    rc.config.regions.map(async (region) => ({
      region: region.name,
      home: region.name === rc.config.homeRegion,
      placement: await poolStub(rc.env, region).stats(),
      workers: workers
        .map((w, i) => ({ w, self: selves[i] }))
        .filter(({ w }) => w.region === region.name)
        .map(({ w, self }) => ({
          id: w.id,
          url: w.url,
          state: w.state,
          static: w.static,
          modelIdentity: w.modelIdentity,
          sequencesTotal: w.sequencesTotal,
          sequencesFree: w.sequencesFree,
          activeRequests: w.activeRequests,
          queueDepth: w.queueDepth,
          residentSessions: w.residentSessions,
          heartbeatAgeMs: w.lastHeartbeat === null ? null : now - w.lastHeartbeat,
          self,
        })),
    })),
  );
  const sum = (name: string) => counters.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);
  const promptTokens = sum("frontier:edge_prompt_tokens_total");
  const cachedTokens = sum("frontier:edge_cached_tokens_total");
  const decisions: Record<string, number> = {};
  for (const s of counters) {
    if (s.name !== "frontier:edge_turns_total") continue;
    const decision = s.labels.decision ?? "unknown";
    decisions[decision] = (decisions[decision] ?? 0) + s.value;
  }
  const reachable = selves.filter((s): s is Extract<WorkerSelf, { reachable: true }> => s.reachable);
  return {
    generatedAt: new Date(now).toISOString(),
    pools,
    sessions: {
      resident: reachable.reduce((a, s) => a + s.liveSessions, 0),
      parked: reachable.reduce((a, s) => a + s.parkedSessions, 0),
    },
    cache: {
      turns: Object.values(decisions).reduce((a, b) => a + b, 0),
      promptTokens,
      cachedTokens,
      hitRate: promptTokens > 0 ? cachedTokens / promptTokens : null,
      decisions,
      recentTurns: recent,
      latestMisses: recent.filter(isMiss).slice(0, LATEST_MISSES),
    },
    checkpoints: {
      count: reachable.reduce((a, s) => a + s.checkpoints, 0),
      bytes: reachable.reduce((a, s) => a + s.checkpointBytes, 0),
    },
    usageToday: usageToday(usage, dayOf(now)),
    usageDays: usageDays(usage, span, prices.currency),
    keyTotals: keyTotals(usage),
  };
}

function isMiss(turn: RecentTurn): boolean {
  return turn.miss !== "none" || turn.decision === "cold";
}

async function askWorker(rc: AdminContext, worker: PoolWorker): Promise<WorkerSelf> {
  if (worker.state === "down") return { reachable: false, error: "down" };
  const client = workerClient(worker.url, rc.config.workerToken);
  try {
    const id = rc.config.workerIds.get(worker.url) ?? worker.id;
    const headers = await capabilityHeaders(rc.config.idSecret, id, workerScope("health", "stats"));
    const options = { timeoutMs: WORKER_RPC_TIMEOUT_MS, headers };
    const [health, stats] = await Promise.all([client.health({}, options), client.stats({}, options)]);
    return {
      reachable: true,
      ready: health.ready,
      model: health.modelName,
      build: health.engineBuild,
      contextSize: health.contextSize,
      sequencesTotal: stats.sequencesTotal,
      sequencesFree: stats.sequencesFree,
      liveSessions: stats.liveSessions,
      parkedSessions: stats.parkedSessions,
      activeRequests: stats.activeRequests,
      queuedRequests: stats.queuedRequests,
      checkpoints: stats.checkpoints,
      checkpointBytes: Number(stats.checkpointBytes),
      checkpointHits: Number(stats.checkpointHits),
      checkpointMisses: Number(stats.checkpointMisses),
    };
  } catch (error) {
    return { reachable: false, error: rpcErrorToApiError(error).message };
  }
}
