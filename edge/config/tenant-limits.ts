/**
 * Per-tenant limits on the model routes (/v1/messages, count_tokens, /v1/responses), enforced by
 * tenant-admission.ts with a TenantLimiterDO per tenant. Configuration:
 *   TENANT_MAX_CONCURRENT  requests in flight per tenant (default 64; 0: unlimited)
 *   TENANT_RATE_PER_MIN    requests per minute per tenant (default 6000; 0: unlimited)
 *   TENANT_LIMITS          JSON overrides: {"<tenant>": {"concurrent": n, "per_minute": m}}
 */
import { ConfigError } from "../core/config-values.ts";

export interface TenantLimits {
  /** Requests in flight at once; 0: unlimited. */
  concurrent: number;
  /** Requests per minute (a token bucket holding a minute's worth); 0: unlimited. */
  perMinute: number;
}

export interface TenantLimitVars {
  TENANT_MAX_CONCURRENT?: string;
  TENANT_RATE_PER_MIN?: string;
  TENANT_LIMITS?: string;
}

export interface TenantLimitConfig {
  defaults: TenantLimits;
  overrides: ReadonlyMap<string, TenantLimits>;
}

export function parseTenantLimits(vars: TenantLimitVars): TenantLimitConfig {
  const defaults = {
    concurrent: count(vars.TENANT_MAX_CONCURRENT, "TENANT_MAX_CONCURRENT", 64),
    perMinute: count(vars.TENANT_RATE_PER_MIN, "TENANT_RATE_PER_MIN", 6000),
  };
  const overrides = new Map<string, TenantLimits>();
  if (vars.TENANT_LIMITS?.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(vars.TENANT_LIMITS);
    } catch {
      throw new ConfigError("TENANT_LIMITS must be JSON: {tenant: {concurrent, per_minute}}");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new ConfigError("TENANT_LIMITS must be JSON: {tenant: {concurrent, per_minute}}");
    }
    for (const [tenant, value] of Object.entries(parsed as Record<string, unknown>)) {
      const v = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
      overrides.set(tenant, {
        concurrent: count(field(v.concurrent), `TENANT_LIMITS.${tenant}.concurrent`, defaults.concurrent),
        perMinute: count(field(v.per_minute), `TENANT_LIMITS.${tenant}.per_minute`, defaults.perMinute),
      });
    }
  }
  return { defaults, overrides };
}

const field = (v: unknown): string | undefined => (v === undefined ? undefined : String(v));

function count(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new ConfigError(`${name} must be a non-negative integer`);
  return value;
}
