/**
 * The authority's in-memory book of what is admitted: a request bucket and a token bucket per scope
 * (the tenant, each key), the requests in flight with what each reserved, and the decisions on them.
 * One instance lives in one Durable Object (one thread), so a check and the reservation it allows
 * happen with nothing in between: concurrent requests cannot both take the last slot, token or unit
 * of budget. Pure logic (no storage): the object persists `state()` behind its decisions.
 *
 * A request reserves its upper bound (tokens: prompt bound + max output; cost: that bound priced) at
 * admission; `settle` gives the reservation back and charges what the turn used, so the sum of what
 * was charged and what is reserved never passes a cap that admission checked.
 */
import type { RateLimitSnapshot, RateWindow } from "../../core/rate-limits.ts";
import type { ModelPrice } from "../pricing.ts";
import { periodEnd, type ScopeLimits } from "./policy.ts";
import { type Bucket, fits, levelAt, msUntil } from "./token-bucket.ts";

/** A scope a request is admitted in: `tenant` or `key:<id>`, its limits and what it spent this period. */
export interface AdmissionScope {
  id: string;
  limits: ScopeLimits;
  /** Charged so far in the current budget period (0 without a budget). */
  spentNano: number;
}

export interface Demand {
  requestId: string;
  keyId: string;
  /** Tokens reserved against the per-minute token rate. */
  tokens: number;
  /** Cost reserved against budgets. */
  costNano: number;
  model: string;
  /** The price that costed the reservation, when a budget made admission price it (settled with it too). */
  price?: ModelPrice | undefined;
  priceVersion?: number | undefined;
}

export interface Reservation extends Demand {
  scopes: string[];
  expiresAt: number;
}

export type RefusalReason = "concurrency" | "requests" | "tokens" | "budget";

export interface Refusal {
  reason: RefusalReason;
  /** The scope whose limit refused it. */
  scope: string;
  limit: number;
  retryAfterS: number;
}

export interface BookState {
  buckets: { scope: string; kind: "requests" | "tokens"; level: number; at: number }[];
  inFlight: Reservation[];
}

/** A reservation older than this is stale (its edge request died without settling it). */
export const LEASE_MS = 15 * 60_000;

export class AdmissionBook {
  readonly #requests = new Map<string, Bucket>();
  readonly #tokens = new Map<string, Bucket>();
  readonly #inFlight = new Map<string, Reservation>();

  constructor(state?: BookState) {
    for (const b of state?.buckets ?? []) {
      (b.kind === "requests" ? this.#requests : this.#tokens).set(b.scope, { level: b.level, at: b.at });
    }
    for (const r of state?.inFlight ?? []) this.#inFlight.set(r.requestId, r);
  }

  /** Admit `demand` in every scope, or say which limit refuses it (nothing is taken then). */
  admit(now: number, scopes: readonly AdmissionScope[], demand: Demand): Refusal | undefined {
    this.#expire(now);
    const refusal = this.#check(now, scopes, demand);
    if (refusal) return refusal;
    for (const scope of scopes) {
      const { rpm, tpm } = scope.limits;
      if (rpm > 0)
        this.#requests.set(scope.id, { level: levelAt(this.#requests.get(scope.id), rpm, now) - 1, at: now });
      if (tpm > 0) {
        const level = levelAt(this.#tokens.get(scope.id), tpm, now);
        this.#tokens.set(scope.id, { level: level - demand.tokens, at: now });
      }
    }
    this.#inFlight.set(demand.requestId, { ...demand, scopes: scopes.map((s) => s.id), expiresAt: now + LEASE_MS });
    return undefined;
  }

  /** What admitting a request with no token or cost demand would refuse now (nothing is taken). */
  preflight(now: number, scopes: readonly AdmissionScope[]): Refusal | undefined {
    this.#expire(now);
    return this.#check(now, scopes, { requestId: "", keyId: "", tokens: 0, costNano: 0, model: "" });
  }

  /** The request's reservation, removed (undefined when it was settled already or expired). */
  release(requestId: string): Reservation | undefined {
    const reservation = this.#inFlight.get(requestId);
    this.#inFlight.delete(requestId);
    return reservation;
  }

  /** Correct the token buckets for a released reservation: give back what it reserved, take what it used. */
  chargeTokens(now: number, scopes: readonly AdmissionScope[], reserved: number, used: number): void {
    for (const scope of scopes) {
      const { tpm } = scope.limits;
      if (tpm <= 0) continue;
      const level = levelAt(this.#tokens.get(scope.id), tpm, now);
      this.#tokens.set(scope.id, { level: Math.min(tpm, level + reserved - used), at: now });
    }
  }

  /** Cost reserved by requests in flight in a scope. */
  reservedNano(scope: string): number {
    let sum = 0;
    for (const r of this.#inFlight.values()) if (r.scopes.includes(scope)) sum += r.costNano;
    return sum;
  }

  inFlight(scope: string): number {
    let count = 0;
    for (const r of this.#inFlight.values()) if (r.scopes.includes(scope)) count++;
    return count;
  }

  /** The tightest request and token windows across the scopes, for the response's headers. */
  snapshot(now: number, scopes: readonly AdmissionScope[]): RateLimitSnapshot {
    const snapshot: RateLimitSnapshot = {};
    for (const scope of scopes) {
      const requests = window(this.#requests.get(scope.id), scope.limits.rpm, now);
      if (requests && (!snapshot.requests || requests.remaining < snapshot.requests.remaining)) {
        snapshot.requests = requests;
      }
      const tokens = window(this.#tokens.get(scope.id), scope.limits.tpm, now);
      if (tokens && (!snapshot.tokens || tokens.remaining < snapshot.tokens.remaining)) snapshot.tokens = tokens;
    }
    return snapshot;
  }

  state(): BookState {
    const buckets: BookState["buckets"] = [];
    for (const [scope, b] of this.#requests) buckets.push({ scope, kind: "requests", ...b });
    for (const [scope, b] of this.#tokens) buckets.push({ scope, kind: "tokens", ...b });
    return { buckets, inFlight: [...this.#inFlight.values()] };
  }

  #check(now: number, scopes: readonly AdmissionScope[], demand: Demand): Refusal | undefined {
    for (const scope of scopes) {
      const { concurrent } = scope.limits;
      if (concurrent > 0 && this.inFlight(scope.id) >= concurrent) {
        return { reason: "concurrency", scope: scope.id, limit: concurrent, retryAfterS: 1 };
      }
    }
    for (const scope of scopes) {
      const { rpm } = scope.limits;
      if (rpm <= 0) continue;
      const level = levelAt(this.#requests.get(scope.id), rpm, now);
      if (level < 1)
        return { reason: "requests", scope: scope.id, limit: rpm, retryAfterS: seconds(msUntil(level, 1, rpm)) };
    }
    for (const scope of scopes) {
      const { tpm } = scope.limits;
      if (tpm <= 0) continue;
      const level = levelAt(this.#tokens.get(scope.id), tpm, now);
      const needed = Math.max(demand.tokens, 1);
      if (!fits(level, needed, tpm)) {
        return { reason: "tokens", scope: scope.id, limit: tpm, retryAfterS: seconds(msUntil(level, needed, tpm)) };
      }
    }
    for (const scope of scopes) {
      const { budget } = scope.limits;
      if (!budget) continue;
      const committed = scope.spentNano + demand.costNano;
      if (committed + this.reservedNano(scope.id) > budget.amountNano || scope.spentNano >= budget.amountNano) {
        // Spent (with this request) past the cap: it resets with the period. Else turns in flight
        // hold the rest and will settle soon.
        const waitMs =
          committed > budget.amountNano || scope.spentNano >= budget.amountNano
            ? periodEnd(budget.period, now) - now
            : 1000;
        return { reason: "budget", scope: scope.id, limit: budget.amountNano, retryAfterS: seconds(waitMs) };
      }
    }
    return undefined;
  }

  #expire(now: number): void {
    for (const [id, r] of this.#inFlight) if (r.expiresAt < now) this.#inFlight.delete(id);
  }
}

function window(bucket: Bucket | undefined, capacity: number, now: number): RateWindow | undefined {
  if (capacity <= 0) return undefined;
  const level = levelAt(bucket, capacity, now);
  return {
    limit: capacity,
    remaining: Math.max(0, Math.floor(level)),
    resetAt: now + msUntil(level, capacity, capacity),
  };
}

function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
