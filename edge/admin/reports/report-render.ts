/**
 * A report's buckets as JSON (`{data: [{starting_at, ending_at, results}], has_more, next_page}`, the
 * Anthropic admin API's report shape) or CSV (one line per result, the group columns always present,
 * empty where not grouped; the next page in a `link` header). Usage results count turns and tokens
 * (uncached = prefilled, cache read = Frontier's reused KV); cost results carry the amount in
 * currency units and exact nano-units (1e-9), so sums can be checked to the last unit.
 */
import { units } from "../../tenancy/pricing.ts";
import type { ReportBucket, ReportRow } from "./report-buckets.ts";
import { pageToken, type ReportQuery } from "./report-query.ts";

export type ReportKind = "usage" | "cost";

function result(kind: ReportKind, row: ReportRow, currency: string): Record<string, string | number | null> {
  const group = { tenant_id: row.tenant_id, api_key_id: row.api_key_id, model: row.model };
  switch (kind) {
    case "usage":
      return {
        ...group,
        requests: row.turns,
        uncached_input_tokens: row.prefilledTokens,
        cache_read_input_tokens: row.cachedTokens,
        input_tokens: row.inputTokens,
        output_tokens: row.outputTokens,
      };
    case "cost":
      return { ...group, currency, amount: units(row.costNano), amount_nano: row.costNano, requests: row.turns };
    default:
      return checkNever(kind);
  }
}

const COLUMNS: Record<ReportKind, string[]> = {
  usage: [
    "tenant_id",
    "api_key_id",
    "model",
    "requests",
    "uncached_input_tokens",
    "cache_read_input_tokens",
    "input_tokens",
    "output_tokens",
  ],
  cost: ["tenant_id", "api_key_id", "model", "currency", "amount", "amount_nano", "requests"],
};

export function renderReport(
  kind: ReportKind,
  query: ReportQuery,
  buckets: readonly ReportBucket[],
  currency: string,
  url: URL,
): Response {
  const more = query.to < query.end;
  const next = more ? pageToken(query.to) : null;
  const time = (at: number) => new Date(at).toISOString();
  if (query.format === "csv") {
    const header = ["starting_at", "ending_at", ...COLUMNS[kind]];
    const lines = [header.join(",")];
    for (const bucket of buckets) {
      for (const row of bucket.rows) {
        const values = result(kind, row, currency);
        lines.push([time(bucket.start), time(bucket.end), ...COLUMNS[kind].map((c) => csvCell(values[c]))].join(","));
      }
    }
    const headers: Record<string, string> = { "content-type": "text/csv; charset=utf-8" };
    if (next !== null) {
      const nextUrl = new URL(url);
      nextUrl.searchParams.set("page", next);
      headers.link = `<${nextUrl.pathname}${nextUrl.search}>; rel="next"`;
    }
    return new Response(`${lines.join("\n")}\n`, { headers });
  }
  const data = buckets.map((bucket) => ({
    starting_at: time(bucket.start),
    ending_at: time(bucket.end),
    results: bucket.rows.map((row) => result(kind, row, currency)),
  }));
  return new Response(JSON.stringify({ data, has_more: more, next_page: next }), {
    headers: { "content-type": "application/json" },
  });
}

/** A CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break; null is empty. */
function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function checkNever(value: never): never {
  throw new Error(`unexpected report kind ${String(value)}`);
}
