/**
 * GET /admin/metrics (admin `read`): the edge's Prometheus text — the EdgeMetricsDO's request, turn
 * and failover counters, the pools' state as the PoolDOs hold it (gauges read now), and each
 * tenant's billed usage, spend and limit refusals from its authority (counters).
 */
import type { MetricSample } from "../metrics/catalog.ts";
import { PROMETHEUS_CONTENT_TYPE, renderPrometheus } from "../metrics/prometheus.ts";
import { metricsStub } from "../metrics/record.ts";
import type { WorkerState } from "../pool/placement.ts";
import { poolStub, poolView } from "../pool/pool-client.ts";
import { recordStoreSamples } from "../protocols/responses/record-quota.ts";
import { authorityOf } from "../tenancy/admission.ts";
import { units } from "../tenancy/pricing.ts";
import { registryStub } from "../tenancy/registry/registry-do.ts";
import { requireAdmin } from "./admin-access.ts";
import type { AdminContext } from "./bindings.ts";
import { knownTenants, usageOf } from "./usage.ts";

const STATES: readonly WorkerState[] = ["up", "draining", "drained", "down"];
/** Why an authority refused a request: the key (revoked, expired, …), the model, or a limit. */
const REFUSAL_REASONS = ["key", "model", "concurrency", "requests", "tokens", "budget"] as const;

export async function handleMetrics(request: Request, rc: AdminContext): Promise<Response> {
  await requireAdmin(request, rc, { scope: "read" });
  const tenants = await knownTenants(rc);
  const [counters, pool, usage, records] = await Promise.all([
    metricsStub(rc.env).samples(),
    poolSamples(rc),
    usageSamples(rc, tenants),
    recordStoreSamples(rc.env, tenants),
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

/** Per tenant: turns and tokens by key, spend and limit refusals (labels bounded: tenants, a fixed set of reasons). */
async function usageSamples(rc: AdminContext, tenants: string[]): Promise<MetricSample[]> {
  const out: MetricSample[] = [];
  const [reports, authorities, prices] = await Promise.all([
    usageOf(rc, tenants),
    Promise.all(tenants.map((tenant) => authorityOf(rc.env, tenant).metrics())),
    registryStub(rc.env).prices(),
  ]);
  tenants.forEach((tenant, i) => {
    const refusals = authorities[i]?.refusals ?? {};
    for (const reason of REFUSAL_REASONS) {
      out.push({
        name: "frontier:tenant_limit_refusals_total",
        labels: { tenant, reason },
        value: refusals[reason] ?? 0,
      });
    }
    const spent = reports[i]?.keys.reduce((sum, key) => sum + key.costNano, 0) ?? 0;
    out.push({
      name: "frontier:tenant_spend_total",
      labels: { tenant, currency: prices.currency },
      value: units(spent),
    });
  });
  for (const report of reports) {
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
