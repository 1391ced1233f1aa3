/**
 * GET /admin/metrics (admin token): the edge's Prometheus text — the EdgeMetricsDO's request, turn
 * and failover counters, the pools' state as the PoolDOs hold it (gauges read now), and each
 * tenant's billed usage from its UsageDO (counters).
 */
import type { MetricSample } from "../metrics/catalog.ts";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../metrics/prometheus.ts";
import { metricsStub } from "../metrics/record.ts";
import type { WorkerState } from "../pool/placement.ts";
import { poolStub, poolView } from "../pool/pool-client.ts";
import { recordStoreSamples } from "../protocols/responses/record-quota.ts";
import { requireAdmin } from "./bearer.ts";
import type { AdminContext } from "./bindings.ts";
import { configuredTenants, usageOf } from "./usage.ts";

const STATES: readonly WorkerState[] = ["up", "draining", "drained", "down"];

export async function handleMetrics(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc);
  const [counters, pool, usage, records] = await Promise.all([
    metricsStub(rc.env).samples(),
    poolSamples(rc),
    usageSamples(rc),
    recordStoreSamples(rc.env, configuredTenants(rc)),
  ]);
  return new Response(renderPrometheus([...counters, ...pool, ...usage, ...records]), {
    headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" },
  });
}

async function poolSamples(rc: AdminContext): Promise<MetricSample[]> {
  const workers = await poolView(rc.env, rc.config, true);
  const out: MetricSample[] = [];
  for (const region of rc.config.regions) {
    for (const state of STATES) {
      const value = workers.filter((w) => w.region === region.name && w.state === state).length;
      out.push({ name: "frontier:pool_workers", labels: { region: region.name, state }, value });
    }
    const stats = await poolStub(rc.env, region).stats();
    for (const [kind, value] of [
      ["placed", stats.placements],
      ["prefix_known", stats.prefixKnown],
      ["prefix_hit", stats.prefixHits],
    ] as const) {
      out.push({ name: "frontier:pool_placements_total", labels: { region: region.name, kind }, value });
    }
  }
  for (const w of workers) {
    const labels = { region: w.region, worker: w.id };
    out.push(
      { name: "frontier:pool_worker_sequences_free", labels, value: w.sequencesFree },
      { name: "frontier:pool_worker_sessions_resident", labels, value: w.residentSessions },
      { name: "frontier:pool_worker_queue_depth", labels, value: w.queueDepth },
    );
  }
  return out;
}

async function usageSamples(rc: AdminContext): Promise<MetricSample[]> {
  const out: MetricSample[] = [];
  for (const report of await usageOf(rc, configuredTenants(rc))) {
    for (const key of report.keys) {
      const labels = { tenant: report.tenant, key_id: key.keyId };
      out.push({ name: "frontier:tenant_turns_total", labels, value: key.turns });
      for (const [kind, value] of [
        ["input", key.inputTokens],
        ["cached", key.cachedTokens],
        ["prefilled", key.prefilledTokens],
        ["output", key.outputTokens],
      ] as const) {
        out.push({ name: "frontier:tenant_tokens_total", labels: { ...labels, kind }, value });
      }
    }
  }
  return out;
}
