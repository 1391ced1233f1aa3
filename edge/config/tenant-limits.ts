/**
 * Per-tenant limits on the model routes (/v1/messages, count_tokens, /v1/responses), enforced by
 * the tenant's authority (tenancy/authority/, the env defaults under its run-time policy). Configuration:
 *   TENANT_MAX_CONCURRENT  requests in flight per tenant (default 64; 0: unlimited)
 *   TENANT_RATE_PER_MIN    requests per minute per tenant (default 6000; 0: unlimited)
 *   TENANT_RESPONSE_STORE_MB   stored Responses records per tenant, all its sessions together
 *                              (default 1024; 0: unlimited; decimals allowed)
 *   TENANT_RESPONSE_INPUT_MB  one stored record's input (default 32; 0: unlimited)
 *   TENANT_LIMITS          JSON overrides: {"<tenant>": {"concurrent": n, "per_minute": m,
 *                          "response_store_mb": s, "response_input_mb": r}}
 */
import { ConfigError } from "../core/config-values.ts";

export interface TenantLimits {
  /** Requests in flight at once; 0: unlimited. */
  concurrent: number;
  /** Requests per minute (a token bucket holding a minute's worth); 0: unlimited. */
  perMinute: number;
}

/** A tenant's request limits and its storage quota for Responses records (responses/record-quota.ts). */
export interface TenantQuota extends TenantLimits {
  /** Bytes of stored Responses records (JSON characters) the tenant may hold; 0: unlimited. */
  responseStoreBytes: number;
  /** Bytes of one record's new input (JSON characters); 0: unlimited. */
  responseRecordBytes: number;
}

export interface TenantLimitVars {
  TENANT_MAX_CONCURRENT?: string;
  TENANT_RATE_PER_MIN?: string;
  TENANT_RESPONSE_STORE_MB?: string;
  TENANT_RESPONSE_INPUT_MB?: string;
  TENANT_LIMITS?: string;
}

export interface TenantLimitConfig {
  defaults: TenantQuota;
  overrides: ReadonlyMap<string, TenantQuota>;
}

export function parseTenantLimits(vars: TenantLimitVars): TenantLimitConfig {
  const defaults = {
    concurrent: count(vars.TENANT_MAX_CONCURRENT, "TENANT_MAX_CONCURRENT", 64),
    perMinute: count(vars.TENANT_RATE_PER_MIN, "TENANT_RATE_PER_MIN", 6000),
    responseStoreBytes: mebibytes(vars.TENANT_RESPONSE_STORE_MB, "TENANT_RESPONSE_STORE_MB", 1024 * MIB),
    responseRecordBytes: mebibytes(vars.TENANT_RESPONSE_INPUT_MB, "TENANT_RESPONSE_INPUT_MB", 32 * MIB),
  };
  const overrides = new Map<string, TenantQuota>();
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
        responseStoreBytes: mebibytes(
          field(v.response_store_mb),
          `TENANT_LIMITS.${tenant}.response_store_mb`,
          defaults.responseStoreBytes,
        ),
        responseRecordBytes: mebibytes(
          field(v.response_input_mb),
          `TENANT_LIMITS.${tenant}.response_input_mb`,
          defaults.responseRecordBytes,
        ),
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

const MIB = 1024 * 1024;

/** Mebibytes (a non-negative number, decimals allowed) as whole bytes. */
function mebibytes(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new ConfigError(`${name} must be a non-negative number of MiB`);
  return Math.round(value * MIB);
}
