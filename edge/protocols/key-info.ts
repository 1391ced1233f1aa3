/**
 * GET /v1/key: the calling key reads its own limits, spend and remaining budget, after OpenRouter's
 * `GET /api/v1/key` (`limit`, `limit_remaining`, `limit_reset`, `usage`, `usage_daily`/`_weekly`/
 * `_monthly`), with Frontier's own fields beside them: the key's rates, its tenant's limits and
 * budget, the models it may use. Amounts are currency units of the price table. Authenticated like
 * any model route (x-api-key, Bearer or the Gemini API's key; a revoked key gets 401); it counts
 * against no limit, and carries the rate-limit headers of every authenticated answer.
 */
import { jsonResponse } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import { keySelfOf } from "../tenancy/admission.ts";
import { identifyCaller } from "../tenancy/auth.ts";
import type { BudgetSpend } from "../tenancy/authority/authority-gate.ts";
import type { ScopeLimits } from "../tenancy/authority/policy.ts";
import type { TenantAuthorityBindings } from "../tenancy/authority/tenant-authority-do.ts";
import { units } from "../tenancy/pricing.ts";

export async function handleKeyInfo(request: Request, rc: RequestContext<TenantAuthorityBindings>): Promise<Response> {
  const caller = await identifyCaller(request.headers, rc.config);
  const self = await keySelfOf(rc, caller);
  const key = self.key;
  const keyBudget = key?.policy.budget ?? null;
  const time = (at: number | null | undefined) => (at === null || at === undefined ? null : new Date(at).toISOString());
  return jsonResponse({
    data: {
      id: self.keyId,
      type: "api_key",
      tenant_id: caller.tenant,
      source: key ? "runtime" : "env",
      name: key?.name ?? null,
      label: key?.hint ?? null,
      status: key?.status ?? "active",
      created_at: time(key?.createdAt),
      expires_at: time(key?.expiresAt),
      last_used_at: time(key?.lastUsedAt),
      currency: self.currency,
      limit: keyBudget && units(keyBudget.amountNano),
      limit_reset: keyBudget?.period ?? null,
      limit_remaining: remaining(self.spend.key),
      usage: units(self.usageNano.total),
      usage_daily: units(self.usageNano.day),
      usage_weekly: units(self.usageNano.week),
      usage_monthly: units(self.usageNano.month),
      models: self.models,
      rate_limit: {
        requests_per_minute: key?.policy.limits.requestsPerMinute ?? null,
        tokens_per_minute: key?.policy.limits.tokensPerMinute ?? null,
        concurrent_requests: key?.policy.limits.concurrentRequests ?? null,
      },
      spend: spendJson(self.spend.key),
      tenant: {
        rate_limit: scopeLimitsJson(self.tenantLimits),
        limit: self.tenantLimits.budget && units(self.tenantLimits.budget.amountNano),
        limit_reset: self.tenantLimits.budget?.period ?? null,
        limit_remaining: remaining(self.spend.tenant),
        spend: spendJson(self.spend.tenant),
      },
    },
  });
}

function remaining(spend: BudgetSpend | null): number | null {
  return spend && units(Math.max(0, spend.budgetNano - spend.spentNano));
}

function spendJson(spend: BudgetSpend | null) {
  return (
    spend && {
      amount: units(spend.spentNano),
      remaining: remaining(spend),
      period_start: new Date(spend.periodStart).toISOString(),
      period_end: new Date(spend.periodEnd).toISOString(),
    }
  );
}

/** A scope's rates as they apply (0 = unlimited). */
function scopeLimitsJson(limits: ScopeLimits) {
  return {
    requests_per_minute: limits.rpm,
    tokens_per_minute: limits.tpm,
    concurrent_requests: limits.concurrent,
  };
}
