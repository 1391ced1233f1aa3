/**
 * What a tenant or a key may do: per-minute rates, concurrency, a budget per period and a model
 * allow-list. Stored on the tenant (its authority's settings row) and on each key; a request must
 * pass both. A tenant's unset rate (`null`) falls back to the deployment's env default
 * (TENANT_RATE_PER_MIN, TENANT_MAX_CONCURRENT; tokens: unlimited); a key's unset rate has no limit of
 * its own. 0 means unlimited everywhere.
 */
import type { TenantLimits } from "../../config/tenant-limits.ts";

export type BudgetPeriod = "day" | "week" | "month";
export const BUDGET_PERIODS: readonly BudgetPeriod[] = ["day", "week", "month"];

/** A spending cap per period, in nano-units of the price table's currency (1e-9). */
export interface Budget {
  amountNano: number;
  period: BudgetPeriod;
}

export interface Limits {
  requestsPerMinute: number | null;
  /** Prefilled input + output tokens per minute (reused KV is not counted). */
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
}

export interface Policy {
  limits: Limits;
  budget: Budget | null;
  /** Model ids this tenant or key may use; null: any. */
  models: string[] | null;
}

export const UNSET_LIMITS: Limits = { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null };
export const OPEN_POLICY: Policy = { limits: UNSET_LIMITS, budget: null, models: null };

/** A scope's limits as admission applies them: numbers, 0 = unlimited. */
export interface ScopeLimits {
  rpm: number;
  tpm: number;
  concurrent: number;
  budget: Budget | null;
}

export function tenantScopeLimits(policy: Policy, env: TenantLimits): ScopeLimits {
  return {
    rpm: policy.limits.requestsPerMinute ?? env.perMinute,
    tpm: policy.limits.tokensPerMinute ?? 0,
    concurrent: policy.limits.concurrentRequests ?? env.concurrent,
    budget: policy.budget,
  };
}

export function keyScopeLimits(policy: Policy): ScopeLimits {
  return {
    rpm: policy.limits.requestsPerMinute ?? 0,
    tpm: policy.limits.tokensPerMinute ?? 0,
    concurrent: policy.limits.concurrentRequests ?? 0,
    budget: policy.budget,
  };
}

/** The models both allow (null: any), in the tenant's order. */
export function allowedModels(tenant: Policy, key: Policy | undefined): string[] | null {
  const a = tenant.models;
  const b = key?.models ?? null;
  if (a === null) return b;
  if (b === null) return a;
  return a.filter((model) => b.includes(model));
}

export function modelAllowed(allowed: readonly string[] | null, model: string): boolean {
  return allowed === null || allowed.includes(model);
}

const DAY_MS = 86_400_000;

/** The UTC start of the period that holds `now` (weeks start on Monday). */
export function periodStart(period: BudgetPeriod, now: number): number {
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  switch (period) {
    case "day":
      return day;
    case "week": {
      const weekday = (new Date(day).getUTCDay() + 6) % 7; // Monday = 0
      return day - weekday * DAY_MS;
    }
    case "month": {
      const date = new Date(day);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
    }
    default:
      return checkNever(period);
  }
}

/** The UTC start of the next period: when spending in this one resets. */
export function periodEnd(period: BudgetPeriod, now: number): number {
  const start = periodStart(period, now);
  switch (period) {
    case "day":
      return start + DAY_MS;
    case "week":
      return start + 7 * DAY_MS;
    case "month": {
      const date = new Date(start);
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    }
    default:
      return checkNever(period);
  }
}

function checkNever(value: never): never {
  throw new Error(`unexpected value ${String(value)}`);
}
