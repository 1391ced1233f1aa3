/**
 * Reading the tenancy admin API's input: page parameters, JSON bodies, and the policy fields tenants
 * and keys share (`limits`, `budget`, `models`), each failure a 400 naming the field.
 */
import { asObject, fail, isObject, type Path } from "../../core/check.ts";
import { ApiError } from "../../core/errors.ts";
import type { PageRequest } from "../../core/pages.ts";
import { readJsonBody } from "../../http/body.ts";
import {
  BUDGET_PERIODS,
  type Budget,
  type BudgetPeriod,
  type Limits,
  type Policy,
} from "../../tenancy/authority/policy.ts";

const MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;
const MAX_MODELS = 256;
/** Nine decimals: amounts are kept in nano-units. */
const NANO = 1e9;

/** `limit` (1-100, default 20), `after_id`, `before_id`. */
export function pageRequest(url: URL): PageRequest {
  const raw = url.searchParams.get("limit");
  const limit = raw === null ? DEFAULT_LIMIT : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new ApiError("invalid_request_error", `limit: an integer from 1 to ${MAX_LIMIT}`, { param: "limit" });
  }
  const afterId = url.searchParams.get("after_id") ?? undefined;
  const beforeId = url.searchParams.get("before_id") ?? undefined;
  if (afterId !== undefined && beforeId !== undefined) throw ApiError.invalid("Send after_id or before_id, not both");
  return { limit, afterId, beforeId };
}

/** A page the store could not start: its cursor names nothing. */
export function unknownCursor(): ApiError {
  return new ApiError("invalid_request_error", "after_id / before_id names no item of this list", {
    param: "after_id",
  });
}

/** The request's JSON object body (an empty body is `{}`). */
export async function bodyObject(request: Request): Promise<Record<string, unknown>> {
  const hasBody = request.headers.get("content-length") !== "0" && request.body !== null;
  if (!hasBody) return {};
  return asObject(await readJsonBody(request, MAX_BODY_BYTES), []);
}

export function nameField(body: Record<string, unknown>, path: Path = ["name"]): string {
  const name = body.name;
  if (typeof name !== "string" || name.trim() === "" || name.length > 256) fail(path, "a name of 1 to 256 characters");
  return name.trim();
}

/** The policy fields present in `body`, applied over `base` (absent: unchanged; a limit or the budget set to null: unset). */
export function policyFields(body: Record<string, unknown>, base: Policy): Policy {
  return {
    limits: body.limits === undefined ? base.limits : limitsField(body.limits, base.limits),
    budget: body.budget === undefined ? base.budget : budgetField(body.budget),
    models: body.models === undefined ? base.models : modelsField(body.models),
  };
}

function limitsField(value: unknown, base: Limits): Limits {
  if (!isObject(value)) fail(["limits"], "an object: requests_per_minute, tokens_per_minute, concurrent_requests");
  const read = (name: string, fallback: number | null): number | null => {
    const v = value[name];
    if (v === undefined) return fallback;
    if (v === null) return null;
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
      fail(["limits", name], "a non-negative integer or null");
    return v;
  };
  for (const key of Object.keys(value)) {
    if (!["requests_per_minute", "tokens_per_minute", "concurrent_requests"].includes(key))
      fail(["limits", key], "unknown limit");
  }
  return {
    requestsPerMinute: read("requests_per_minute", base.requestsPerMinute),
    tokensPerMinute: read("tokens_per_minute", base.tokensPerMinute),
    concurrentRequests: read("concurrent_requests", base.concurrentRequests),
  };
}

function budgetField(value: unknown): Budget | null {
  if (value === null) return null;
  if (!isObject(value)) fail(["budget"], 'an object {"amount": number, "period": "day" | "week" | "month"} or null');
  const period = value.period;
  if (typeof period !== "string" || !BUDGET_PERIODS.includes(period as BudgetPeriod)) {
    fail(["budget", "period"], 'one of "day", "week", "month"');
  }
  return { amountNano: amountNano(value.amount, ["budget", "amount"]), period: period as BudgetPeriod };
}

function modelsField(value: unknown): string[] | null {
  if (value === null) return null;
  if (!Array.isArray(value) || value.length > MAX_MODELS)
    fail(["models"], `an array of at most ${MAX_MODELS} model ids, or null (any)`);
  const models = value.map((model, i) => {
    if (typeof model !== "string" || model === "" || model.length > 256) fail(["models", i], "a model id");
    return model;
  });
  return [...new Set(models)];
}

/** A currency amount (≥ 0, at most nine decimals, below 9 million) as nano-units. */
export function amountNano(value: unknown, path: Path): number {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value >= 9e6) {
    fail(path, "a non-negative amount below 9,000,000");
  }
  return Math.round(value * NANO);
}

/** An RFC 3339 time or null; `now` bounds nothing (a past time makes a key expired at once). */
export function timeField(value: unknown, path: Path): number | null {
  if (value === null) return null;
  const at = typeof value === "string" ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(at)) fail(path, "an RFC 3339 time (2027-01-31T00:00:00Z) or null");
  return at;
}

/** A whole number of seconds in [0, max]. */
export function secondsField(value: unknown, path: Path, max: number): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0 || value > max) {
    fail(path, `whole seconds from 0 to ${max}`);
  }
  return value;
}
