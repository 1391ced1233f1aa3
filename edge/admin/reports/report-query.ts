/**
 * The query of a usage or cost report (`GET /admin/usage_report`, `/admin/cost_report`), after the
 * Anthropic and OpenAI admin APIs' reports:
 *   starting_at   required: RFC 3339 or YYYY-MM-DD; the first bucket is the one holding it
 *   ending_at     exclusive, the same forms (default: now)
 *   bucket_width  `1h` or `1d` (default `1d`), UTC
 *   group_by      any of `tenant_id`, `api_key_id`, `model` (repeated, `group_by[]=`, or comma-separated)
 *   tenant_ids, api_key_ids, models   filters (the same three spellings)
 *   limit         buckets per page (1d: default 7, at most 31; 1h: default 24, at most 168)
 *   page          the `next_page` of the previous answer
 *   format        `json` (default) or `csv` (or `Accept: text/csv`)
 */
import { ApiError } from "../../core/errors.ts";

export type GroupField = "tenant_id" | "api_key_id" | "model";
export const GROUP_FIELDS: readonly GroupField[] = ["tenant_id", "api_key_id", "model"];

export type BucketWidth = "1h" | "1d";
const WIDTH_MS: Record<BucketWidth, number> = { "1h": 3_600_000, "1d": 86_400_000 };
const LIMITS: Record<BucketWidth, { fallback: number; max: number }> = {
  "1h": { fallback: 24, max: 168 },
  "1d": { fallback: 7, max: 31 },
};

export interface ReportQuery {
  width: BucketWidth;
  widthMs: number;
  /** This page's first bucket start and the end of its last bucket (epoch ms). */
  from: number;
  to: number;
  /** The report's end (exclusive, a bucket boundary): past `to` there are more pages. */
  end: number;
  groupBy: readonly GroupField[];
  tenantIds: readonly string[] | null;
  keyIds: readonly string[] | null;
  models: readonly string[] | null;
  format: "json" | "csv";
}

export function reportQuery(request: Request, now: number): ReportQuery {
  const url = new URL(request.url);
  const width = widthOf(url.searchParams.get("bucket_width") ?? "1d");
  const widthMs = WIDTH_MS[width];
  const floor = (at: number) => Math.floor(at / widthMs) * widthMs;
  const starting = url.searchParams.get("starting_at");
  if (starting === null) throw invalid("starting_at: required (RFC 3339 time or YYYY-MM-DD)", "starting_at");
  const endingAt = url.searchParams.get("ending_at");
  const end = Math.ceil((endingAt === null ? now : timeOf(endingAt, "ending_at")) / widthMs) * widthMs;
  const page = url.searchParams.get("page");
  const from = page === null ? floor(timeOf(starting, "starting_at")) : pageStart(page, widthMs);
  if (end <= from && page === null) throw invalid("ending_at: must be after starting_at", "ending_at");
  const limit = limitOf(url.searchParams.get("limit"), LIMITS[width]);
  const groupBy = listOf(url, "group_by");
  for (const field of groupBy) {
    if (!(GROUP_FIELDS as readonly string[]).includes(field)) {
      throw invalid(`group_by: "${field}" is not one of ${GROUP_FIELDS.join(", ")}`, "group_by");
    }
  }
  const filter = (name: string) => {
    const values = listOf(url, name);
    return values.length === 0 ? null : values;
  };
  const accept = request.headers.get("accept") ?? "";
  const format = url.searchParams.get("format") ?? (accept.includes("text/csv") ? "csv" : "json");
  if (format !== "json" && format !== "csv") throw invalid('format: "json" or "csv"', "format");
  return {
    width,
    widthMs,
    from,
    to: Math.min(end, from + limit * widthMs),
    end,
    groupBy: GROUP_FIELDS.filter((field) => groupBy.includes(field)),
    tenantIds: filter("tenant_ids"),
    keyIds: filter("api_key_ids"),
    models: filter("models"),
    format,
  };
}

/** `name`, `name[]` (repeated) and comma-separated values, in one list. */
function listOf(url: URL, name: string): string[] {
  const values = [...url.searchParams.getAll(name), ...url.searchParams.getAll(`${name}[]`)];
  return values
    .flatMap((v) => v.split(","))
    .map((v) => v.trim())
    .filter((v) => v !== "");
}

function widthOf(value: string): BucketWidth {
  if (value === "1h" || value === "1d") return value;
  throw invalid('bucket_width: "1h" or "1d"', "bucket_width");
}

function timeOf(value: string, name: string): number {
  const at = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(at)) throw invalid(`${name}: expected an RFC 3339 time or YYYY-MM-DD`, name);
  return at;
}

function limitOf(value: string | null, { fallback, max }: { fallback: number; max: number }): number {
  if (value === null) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw invalid(`limit: an integer from 1 to ${max}`, "limit");
  return n;
}

/** A `next_page` token: the next bucket's start, as RFC 3339 (on the width's boundary). */
export function pageToken(at: number): string {
  return new Date(at).toISOString();
}

function pageStart(token: string, widthMs: number): number {
  const at = Date.parse(token);
  if (Number.isNaN(at) || at % widthMs !== 0) throw invalid("page: not a page token of this report", "page");
  return at;
}

function invalid(message: string, param: string): ApiError {
  return new ApiError("invalid_request_error", message, { param });
}
