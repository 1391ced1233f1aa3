/**
 * The per-tenant storage quota for stored Responses records, checked before a `store: true` turn
 * runs (a refusal after the turn could not reach a client whose stream already ended):
 *   - the new input alone larger than the tenant's per-record limit: 413 `request_too_large`,
 *     param `input`, not retried;
 *   - the tenant already holding its quota (all its sessions together, ledger in record-ledger.ts):
 *     429 `storage_quota_exceeded`, `x-should-retry: false`, `retry-after` the seconds until its
 *     soonest record expires (space comes back then without the client doing anything).
 * Refusals, not eviction: a stored record is what a later `previous_response_id` continues from,
 * and dropping a tenant's older conversation to make room would break it silently, much later.
 * The client that hits the quota can send `store: false` (the turn is served) or delete records
 * (`DELETE /v1/responses/{id}`). Concurrent turns of one tenant may each pass the check, so the
 * quota can be overshot by what those turns store. Refusals are counted by reason; what each
 * tenant holds is a gauge on /admin/metrics.
 */
import type { TenantQuota } from "../../config/tenant-limits.ts";
import { ApiError } from "../../core/errors.ts";
import type { RequestContext } from "../../http/context.ts";
import type { MetricSample } from "../../metrics/catalog.ts";
import type { MetricsBindings } from "../../metrics/edge-metrics-do.ts";
import { metricsStub } from "../../metrics/record.ts";
import { ledgerName } from "./record-ledger.ts";
import type { ResponseStoreBindings } from "./response-store-do.ts";

export type RecordRefusalReason = "record-too-large" | "over-quota";

/** Throw the 413 or 429 a `store: true` turn of `tenant` gets, or return when its record may be stored. */
export async function refuseOverRecordQuota(
  rc: RequestContext<ResponseStoreBindings & MetricsBindings>,
  tenant: string,
  input: unknown,
): Promise<void> {
  const quota: TenantQuota = rc.config.tenantLimits.overrides.get(tenant) ?? rc.config.tenantLimits.defaults;
  if (quota.responseRecordBytes > 0) {
    // UTF-8 bytes, as the stored (sealed) record counts them.
    const bytes = new TextEncoder().encode(JSON.stringify(input)).byteLength;
    if (bytes > quota.responseRecordBytes) {
      countRefusal(rc, tenant, "record-too-large");
      throw new ApiError(
        "request_too_large",
        `This input is ${bytes} bytes; a stored response may add at most ${quota.responseRecordBytes}. Send it with store: false, or split it across turns.`,
        { param: "input", shouldRetry: false },
      );
    }
  }
  if (quota.responseStoreBytes === 0) return;
  const usage = await rc.env.RESPONSES.getByName(ledgerName(tenant)).usage();
  if (usage.bytes < quota.responseStoreBytes) return;
  countRefusal(rc, tenant, "over-quota");
  const retryAfter =
    usage.soonestExpiry === null ? undefined : Math.max(1, Math.ceil((usage.soonestExpiry - Date.now()) / 1000));
  throw new ApiError(
    "rate_limit_error",
    `This API key's tenant holds ${usage.bytes} bytes of stored responses (${usage.records} records), its quota is ${quota.responseStoreBytes}. Send store: false, or delete stored responses (DELETE /v1/responses/{id}); space also comes back as records expire.`,
    { param: "store", code: "storage_quota_exceeded", shouldRetry: false, retryAfter },
  );
}

function countRefusal(rc: RequestContext<MetricsBindings>, tenant: string, reason: RecordRefusalReason): void {
  const name = "frontier:edge_response_store_refusals_total";
  rc.waitUntil(
    metricsStub(rc.env)
      .add([{ name, labels: { tenant, reason }, value: 1 }])
      .catch(() => undefined),
  );
}

/** Gauges for /admin/metrics: what each tenant holds, as its ledger last heard (one call per tenant). */
export async function recordStoreSamples(env: ResponseStoreBindings, tenants: string[]): Promise<MetricSample[]> {
  const usages = await Promise.all(tenants.map((tenant) => env.RESPONSES.getByName(ledgerName(tenant)).usage()));
  return tenants.flatMap((tenant, i) => [
    { name: "frontier:tenant_response_store_bytes", labels: { tenant }, value: usages[i]?.bytes ?? 0 },
    { name: "frontier:tenant_response_store_records", labels: { tenant }, value: usages[i]?.records ?? 0 },
  ]);
}
