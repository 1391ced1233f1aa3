/**
 * The authority's decisions on requests: who the key is (status, expiry, rotation grace, the tenant
 * archived), whether the model is allowed, and admission against every limit of the tenant and the
 * key, with the turn's upper bound reserved; then the settlement of what the turn used. Each decision
 * runs synchronously between awaits (the only await is a price-table fetch, before it), so concurrent
 * requests see each other's reservations.
 */
import { clock } from "../../core/clock.ts";
import type { RateLimitSnapshot } from "../../core/rate-limits.ts";
import { boundNano, costNano, priceFor } from "../pricing.ts";
import type { AdmissionBook, AdmissionScope, Demand, Refusal } from "./admission-book.ts";
import type { AdmitRequest, AuthorityAnswer, AuthorityRefusal, Presented, SettleRequest } from "./authority-api.ts";
import type { KeyStore } from "./key-store.ts";
import {
  allowedModels,
  type Budget,
  keyScopeLimits,
  modelAllowed,
  OPEN_POLICY,
  type Policy,
  periodEnd,
  periodStart,
  tenantScopeLimits,
} from "./policy.ts";
import type { PriceCache } from "./price-cache.ts";
import type { SpendBook } from "./spend.ts";
import type { TenantSettingsStore } from "./tenant-settings.ts";
import type { UsageLedger } from "./usage-ledger.ts";

/** A budget's current period and what was charged in it. */
export interface BudgetSpend {
  spentNano: number;
  budgetNano: number;
  periodStart: number;
  periodEnd: number;
}

type Who = { refusal: AuthorityRefusal } | { scopes: AdmissionScope[]; models: string[] | null };

export interface GateParts {
  book: AdmissionBook;
  settings: TenantSettingsStore;
  keys: KeyStore;
  ledger: UsageLedger;
  spend: SpendBook;
  prices: PriceCache;
  transaction: <T>(work: () => T) => T;
  /** Soft state changed (written behind). */
  changed: () => void;
}

export class AuthorityGate {
  /** Keys used since the last write: id → when. */
  readonly lastUsed = new Map<string, number>();
  /** Refusals by reason since the object started over (added to the stored counts when written). */
  readonly refusals = new Map<string, number>();

  constructor(private readonly parts: GateParts) {}

  async admit(request: AdmitRequest): Promise<AuthorityAnswer> {
    const first = this.#who(request, clock.now());
    if ("refusal" in first) return this.#refused(first.refusal);
    // A budget anywhere: the reservation is priced with a fresh table (fetched before deciding).
    if (first.scopes.some((s) => s.limits.budget)) await this.parts.prices.fresh(clock.now());
    const now = clock.now();
    const who = this.#who(request, now);
    if ("refusal" in who) return this.#refused(who.refusal);
    const { scopes, models } = who;
    if (!modelAllowed(models, request.model)) return this.#refused({ kind: "model", model: request.model });
    const budgeted = scopes.some((s) => s.limits.budget);
    const table = this.parts.prices.cached(now);
    const price = priceFor(table, request.model);
    const demand: Demand = {
      requestId: request.requestId,
      keyId: request.keyId,
      tokens: request.inputTokens + request.outputTokens,
      costNano: boundNano(price, request.inputTokens, request.outputTokens),
      model: request.model,
      ...(budgeted && { price, priceVersion: table.version }),
    };
    const refusal = this.parts.book.admit(now, scopes, demand);
    const snapshot = this.parts.book.snapshot(now, scopes);
    if (refusal) return this.#refused(this.#limitRefusal(refusal, scopes, table.currency), snapshot);
    this.#used(request, now);
    return { ok: true, snapshot, models };
  }

  /** Is the key good (and, with `preflight`, would a request be admitted now)? Takes nothing. */
  authenticate(presented: Presented, options: { preflight?: boolean } = {}): AuthorityAnswer {
    const now = clock.now();
    const who = this.#who(presented, now);
    if ("refusal" in who) return this.#refused(who.refusal);
    const snapshot = this.parts.book.snapshot(now, who.scopes);
    if (options.preflight) {
      const refusal = this.parts.book.preflight(now, who.scopes);
      if (refusal) return this.#refused(this.#limitRefusal(refusal, who.scopes, undefined), snapshot);
    }
    this.#used(presented, now);
    return { ok: true, snapshot, models: who.models };
  }

  /** Give back the request's reservation and charge what its turn used (once per request id). */
  async settle(request: SettleRequest): Promise<{ counted: boolean }> {
    const reservation = this.parts.book.release(request.requestId);
    const usage = request.usage;
    const now = clock.now();
    if (reservation) {
      const used = usage ? usage.prefilled + usage.output : 0;
      this.parts.book.chargeTokens(now, this.#tokenScopes(request.keyId), reservation.tokens, used);
    }
    this.parts.changed();
    if (!usage) return { counted: false };
    // Costed with the version that admitted it when a budget priced it, else the current table.
    const priced = reservation?.priceVersion !== undefined ? reservation : undefined;
    const table = priced ? undefined : await this.parts.prices.fresh(now);
    const price = table ? priceFor(table, usage.model) : priced?.price;
    const cost = costNano(price, usage);
    const turn = {
      requestId: request.requestId,
      keyId: request.keyId,
      ...usage,
      costNano: cost,
      priceVersion: table?.version ?? priced?.priceVersion ?? 0,
      at: clock.now(),
    };
    const counted = this.parts.transaction(() => this.parts.ledger.record(turn));
    if (counted) this.parts.spend.charge(request.keyId, turn.at, cost);
    return { counted };
  }

  spend(keyId?: string): { tenant: BudgetSpend | null; key: BudgetSpend | null } {
    const now = clock.now();
    const of = (budget: Budget | null, key: string | undefined): BudgetSpend | null =>
      budget && {
        spentNano: this.parts.spend.spent(budget, key, now),
        budgetNano: budget.amountNano,
        periodStart: periodStart(budget.period, now),
        periodEnd: periodEnd(budget.period, now),
      };
    const keyPolicy = keyId === undefined ? undefined : this.parts.keys.get(keyId, now)?.policy;
    return {
      tenant: of(this.parts.settings.get().policy.budget, undefined),
      key: keyPolicy ? of(keyPolicy.budget, keyId) : null,
    };
  }

  /** The scopes of a presented key, or why it is refused. */
  #who(presented: Presented, now: number): Who {
    const tenant = this.parts.settings.get();
    if (tenant.status === "archived") return { refusal: { kind: "key", why: "archived" } };
    let keyPolicy: Policy = OPEN_POLICY;
    if (presented.credential.kind === "runtime") {
      const found = this.parts.keys.lookup(presented.keyId, presented.credential.digest, now);
      if (!found.ok) return { refusal: { kind: "key", why: found.why } };
      keyPolicy = found.key.policy;
    }
    const scopes: AdmissionScope[] = [
      {
        id: "tenant",
        limits: tenantScopeLimits(tenant.policy, presented.env),
        spentNano: this.parts.spend.spent(tenant.policy.budget, undefined, now),
      },
      {
        id: `key:${presented.keyId}`,
        limits: keyScopeLimits(keyPolicy),
        spentNano: this.parts.spend.spent(keyPolicy.budget, presented.keyId, now),
      },
    ];
    return { scopes, models: allowedModels(tenant.policy, keyPolicy) };
  }

  /** The scopes whose token buckets a settlement corrects (only their per-minute token limits matter). */
  #tokenScopes(keyId: string): AdmissionScope[] {
    const now = clock.now();
    const keyPolicy = this.parts.keys.get(keyId, now)?.policy ?? OPEN_POLICY;
    const tenantPolicy = this.parts.settings.get().policy;
    const noEnv = { concurrent: 0, perMinute: 0 };
    return [
      { id: "tenant", limits: tenantScopeLimits(tenantPolicy, noEnv), spentNano: 0 },
      { id: `key:${keyId}`, limits: keyScopeLimits(keyPolicy), spentNano: 0 },
    ];
  }

  #limitRefusal(refusal: Refusal, scopes: AdmissionScope[], currency: string | undefined): AuthorityRefusal {
    const budget = scopes.find((s) => s.id === refusal.scope)?.limits.budget;
    return {
      kind: "limit",
      reason: refusal.reason,
      scope: refusal.scope === "tenant" ? "tenant" : "key",
      limit: refusal.limit,
      retryAfterS: refusal.retryAfterS,
      ...(refusal.reason === "budget" && { period: budget?.period, currency }),
    };
  }

  #refused(refusal: AuthorityRefusal, snapshot?: RateLimitSnapshot): AuthorityAnswer {
    const reason = refusal.kind === "limit" ? refusal.reason : refusal.kind;
    this.refusals.set(reason, (this.refusals.get(reason) ?? 0) + 1);
    this.parts.changed();
    return { ok: false, refusal, snapshot };
  }

  #used(presented: Presented, now: number): void {
    if (presented.credential.kind !== "runtime") return;
    this.lastUsed.set(presented.keyId, now);
    this.parts.changed();
  }
}
