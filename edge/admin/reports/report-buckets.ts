/**
 * A report's buckets from the tenants' hourly ledger rows (usage-ledger.ts: the buckets every budget
 * sums): rows fall into `1h` or `1d` buckets, are filtered and summed per group (tenant, key, model,
 * whichever the query groups by; the others are null). Every bucket of the page is listed, an empty
 * one with no results, as the Anthropic and OpenAI reports do.
 */
import { addUsage, type UsageHour, type UsageTotals } from "../../tenancy/authority/usage-ledger.ts";
import type { GroupField, ReportQuery } from "./report-query.ts";

export interface ReportRow extends UsageTotals {
  tenant_id: string | null;
  api_key_id: string | null;
  model: string | null;
}

export interface ReportBucket {
  start: number;
  end: number;
  rows: ReportRow[];
}

export function reportBuckets(
  query: ReportQuery,
  tenants: readonly { tenant: string; hours: readonly UsageHour[] }[],
): ReportBucket[] {
  const buckets = new Map<number, Map<string, ReportRow>>();
  for (let start = query.from; start < query.to; start += query.widthMs) buckets.set(start, new Map());
  const grouped = (field: GroupField) => query.groupBy.includes(field);
  for (const { tenant, hours } of tenants) {
    for (const hour of hours) {
      if (query.keyIds && !query.keyIds.includes(hour.keyId)) continue;
      if (query.models && !query.models.includes(hour.model)) continue;
      const rows = buckets.get(Math.floor(hour.hour / query.widthMs) * query.widthMs);
      if (!rows) continue;
      const group = {
        tenant_id: grouped("tenant_id") ? tenant : null,
        api_key_id: grouped("api_key_id") ? hour.keyId : null,
        model: grouped("model") ? hour.model : null,
      };
      const name = JSON.stringify([group.tenant_id, group.api_key_id, group.model]);
      const have = rows.get(name);
      rows.set(name, have ? addUsage(have, hour) : { ...group, ...totals(hour) });
    }
  }
  return [...buckets].map(([start, rows]) => ({
    start,
    end: start + query.widthMs,
    rows: [...rows.values()].sort(byGroup),
  }));
}

function totals(t: UsageTotals): UsageTotals {
  return {
    turns: t.turns,
    inputTokens: t.inputTokens,
    cachedTokens: t.cachedTokens,
    prefilledTokens: t.prefilledTokens,
    outputTokens: t.outputTokens,
    costNano: t.costNano,
  };
}

function byGroup(a: ReportRow, b: ReportRow): number {
  const text = (r: ReportRow) => [r.tenant_id ?? "", r.api_key_id ?? "", r.model ?? ""].join("\u0000");
  return text(a).localeCompare(text(b));
}
