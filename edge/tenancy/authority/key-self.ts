/**
 * What a key reads of itself (`GET /v1/key`, after OpenRouter's `GET /api/v1/key`): its own policy,
 * its tenant's limits as they apply to it, what its budget periods have spent and what is left, and
 * what it spent today, this week, this month and ever. Read from the authority's ledger (the same
 * hourly buckets that budgets and reports sum), after the key was authenticated like any request.
 */
import type { TenantLimits } from "../../config/tenant-limits.ts";
import type { BudgetSpend } from "./authority-gate.ts";
import type { KeyInfo } from "./key-store.ts";
import { type BudgetPeriod, periodStart, type ScopeLimits, tenantScopeLimits } from "./policy.ts";
import type { TenantSettings } from "./tenant-settings.ts";
import type { UsageLedger } from "./usage-ledger.ts";

export interface KeySelf {
  keyId: string;
  /** The run-time key (undefined: an API_KEYS key, which has no record of its own). */
  key: KeyInfo | undefined;
  /** The tenant's limits as admission applies them (env defaults filled in; 0 = unlimited). */
  tenantLimits: ScopeLimits;
  models: string[] | null;
  spend: { tenant: BudgetSpend | null; key: BudgetSpend | null };
  /** What this key's turns cost, in nano-units: since the UTC day, week (Monday) and month began, and ever. */
  usageNano: Record<BudgetPeriod | "total", number>;
  currency: string;
}

export interface KeySelfParts {
  keyId: string;
  key: KeyInfo | undefined;
  settings: TenantSettings;
  env: TenantLimits;
  models: string[] | null;
  spend: { tenant: BudgetSpend | null; key: BudgetSpend | null };
  ledger: UsageLedger;
  currency: string;
  now: number;
}

export function keySelf(parts: KeySelfParts): KeySelf {
  const spent = (start: number) => parts.ledger.spentSince(start, parts.keyId);
  return {
    keyId: parts.keyId,
    key: parts.key,
    tenantLimits: tenantScopeLimits(parts.settings.policy, parts.env),
    models: parts.models,
    spend: parts.spend,
    usageNano: {
      day: spent(periodStart("day", parts.now)),
      week: spent(periodStart("week", parts.now)),
      month: spent(periodStart("month", parts.now)),
      total: spent(0),
    },
    currency: parts.currency,
  };
}
