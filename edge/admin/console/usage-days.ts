/**
 * The console's usage data in /admin/status.json: per UTC day, tenant and key over the last
 * `USAGE_DAYS` days (the charts), each key's all-time totals (the keys table) and today's totals per
 * tenant (the status page's table), from the same reports `/admin/usage` reads. Amounts are
 * currency units of the price table's currency; nothing here names a secret (keys by id only).
 */
import { units } from "../../tenancy/pricing.ts";

export const USAGE_DAYS = 14;
const DAY_MS = 86_400_000;

/** The fields read from a tenant's usage report (the ledger's UsageReport, usage.ts's usageOf). */
interface UsageTotals {
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  costNano: number;
}
interface TenantReport {
  tenant: string;
  days: readonly (UsageTotals & { day: string; keyId: string })[];
  keys: readonly (UsageTotals & { keyId: string })[];
}

/** A UTC day as `YYYY-MM-DD` (the ledger's day buckets). */
const dayOf = (epochMs: number) => new Date(epochMs).toISOString().slice(0, 10);

/** The days the charts cover, oldest first: [from, to] as `YYYY-MM-DD`. */
export function usageWindow(now: number): { from: string; to: string } {
  return { from: dayOf(now - (USAGE_DAYS - 1) * DAY_MS), to: dayOf(now) };
}

function totals(row: UsageTotals) {
  return {
    turns: row.turns,
    inputTokens: row.inputTokens,
    cachedTokens: row.cachedTokens,
    outputTokens: row.outputTokens,
    cost: units(row.costNano),
  };
}

export function usageDays(reports: readonly TenantReport[], window: { from: string; to: string }, currency: string) {
  return {
    ...window,
    currency,
    rows: reports.flatMap((r) =>
      r.days
        .filter((d) => d.day >= window.from && d.day <= window.to)
        .map((d) => ({ day: d.day, tenant: r.tenant, keyId: d.keyId, ...totals(d) })),
    ),
  };
}

/** Each key's all-time totals (the ledger keeps them for revoked keys and archived tenants too). */
export function keyTotals(reports: readonly TenantReport[]) {
  return reports.flatMap((r) => r.keys.map((k) => ({ tenant: r.tenant, keyId: k.keyId, ...totals(k) })));
}

/** Today's totals per tenant (the status page's "Usage today" table). */
export function usageToday(reports: readonly TenantReport[], today: string) {
  return reports.map((r) => {
    const days = r.days.filter((d) => d.day === today);
    const sum = (field: "turns" | "inputTokens" | "cachedTokens" | "outputTokens") =>
      days.reduce((a, d) => a + d[field], 0);
    return {
      tenant: r.tenant,
      turns: sum("turns"),
      inputTokens: sum("inputTokens"),
      cachedTokens: sum("cachedTokens"),
      outputTokens: sum("outputTokens"),
    };
  });
}
