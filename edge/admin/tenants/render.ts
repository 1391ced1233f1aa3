/**
 * The tenancy admin API's JSON shapes, after the OpenAI and Anthropic admin APIs: objects carry `id`
 * and `type`, times are RFC 3339, amounts are currency units, lists are `{data, has_more, first_id,
 * last_id}`. A secret appears once, as `value` in the answer that issued it.
 */

import type { BudgetSpend } from "../../tenancy/authority/authority-gate.ts";
import type { KeyInfo } from "../../tenancy/authority/key-store.ts";
import type { Budget, Limits, Policy } from "../../tenancy/authority/policy.ts";
import type { TenantSettings } from "../../tenancy/authority/tenant-settings.ts";
import type { PriceTable } from "../../tenancy/pricing.ts";
import { units } from "../../tenancy/pricing.ts";
import type { AdminKeyInfo } from "../../tenancy/registry/admin-keys.ts";
import type { AuditRecord } from "../../tenancy/registry/audit-log.ts";
import type { DirectoryTenant } from "../../tenancy/registry/tenant-directory.ts";

export function time(at: number | null | undefined): string | null {
  return at === null || at === undefined ? null : new Date(at).toISOString();
}

export function limitsJson(limits: Limits) {
  return {
    requests_per_minute: limits.requestsPerMinute,
    tokens_per_minute: limits.tokensPerMinute,
    concurrent_requests: limits.concurrentRequests,
  };
}

export function budgetJson(budget: Budget | null) {
  return budget === null ? null : { amount: units(budget.amountNano), period: budget.period };
}

export function policyJson(policy: Policy) {
  return { limits: limitsJson(policy.limits), budget: budgetJson(policy.budget), models: policy.models };
}

/** What a budget's current period has spent (null without a budget). */
export function spendJson(spend: BudgetSpend | null) {
  return (
    spend && {
      amount: units(spend.spentNano),
      remaining: units(Math.max(0, spend.budgetNano - spend.spentNano)),
      period_start: time(spend.periodStart),
      period_end: time(spend.periodEnd),
    }
  );
}

export function tenantJson(tenant: DirectoryTenant, settings: TenantSettings) {
  return {
    id: tenant.id,
    type: "tenant",
    name: tenant.name,
    status: settings.status === "archived" || tenant.archivedAt !== null ? "archived" : "active",
    source: tenant.source,
    created_at: time(tenant.createdAt),
    archived_at: time(tenant.archivedAt ?? settings.archivedAt),
    ...policyJson(settings.policy),
  };
}

/** The directory's fields only (a list does not ask every tenant's authority). */
export function tenantListItem(tenant: DirectoryTenant) {
  return {
    id: tenant.id,
    type: "tenant",
    name: tenant.name,
    status: tenant.archivedAt === null ? "active" : "archived",
    source: tenant.source,
    created_at: time(tenant.createdAt),
    archived_at: time(tenant.archivedAt),
  };
}

export function keyJson(tenant: string, key: KeyInfo) {
  return {
    id: key.id,
    type: "api_key",
    tenant_id: tenant,
    name: key.name,
    status: key.status,
    source: "runtime",
    read_only: false,
    partial_key_hint: key.hint,
    created_at: time(key.createdAt),
    created_by: key.createdBy,
    expires_at: time(key.expiresAt),
    last_used_at: time(key.lastUsedAt),
    rotated_at: time(key.rotatedAt),
    previous_secret_valid_until: time(key.previousValidUntil),
    revoked_at: time(key.revokedAt),
    ...policyJson(key.policy),
  };
}

/** An API_KEYS key: its id is its SHA-256's first 16 hex characters (as usage names it). */
export function envKeyJson(tenant: string, id: string) {
  return {
    id,
    type: "api_key",
    tenant_id: tenant,
    name: `API_KEYS ${id}`,
    status: "active",
    source: "env",
    read_only: true,
    partial_key_hint: null,
    created_at: null,
    created_by: "env",
    expires_at: null,
    last_used_at: null,
    rotated_at: null,
    previous_secret_valid_until: null,
    revoked_at: null,
    limits: limitsJson({ requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: null }),
    budget: null,
    models: null,
  };
}

export function pricesJson(table: PriceTable & { at?: number }) {
  return {
    id: `prices_${table.version}`,
    type: "price_table",
    version: table.version,
    currency: table.currency,
    created_at: time(table.at),
    data: Object.entries(table.prices)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([model, price]) => ({
        model,
        input: price.inputMicro / 1e6,
        cached_input: price.cachedInputMicro / 1e6,
        output: price.outputMicro / 1e6,
      })),
  };
}

export function adminKeyJson(key: AdminKeyInfo) {
  return {
    id: key.id,
    type: "admin_key",
    name: key.name,
    scopes: key.scopes,
    tenant_id: key.tenant,
    partial_key_hint: key.hint,
    status: key.revokedAt === null ? "active" : "revoked",
    created_at: time(key.createdAt),
    created_by: key.createdBy,
    revoked_at: time(key.revokedAt),
  };
}

export function auditJson(record: AuditRecord) {
  return {
    id: record.id,
    type: "audit_event",
    action: record.action,
    at: time(record.at),
    actor: record.actor,
    request_id: record.requestId,
    source: record.source,
    tenant_id: record.tenant,
    target: record.target,
    diff: JSON.parse(record.diff) as unknown,
    prev_hash: record.prevHash,
    hash: record.hash,
  };
}
