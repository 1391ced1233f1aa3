/**
 * What each scope (the tenant, a key) has been charged in its current budget period, kept in the
 * authority's memory: read from the ledger's hourly buckets once per period, then added to as turns
 * settle. Budget periods start on UTC hour boundaries, so the buckets sum to exactly the period.
 */
import { type Budget, periodEnd, periodStart } from "./policy.ts";
import type { UsageLedger } from "./usage-ledger.ts";

interface Entry {
  start: number;
  end: number;
  nano: number;
}

export class SpendBook {
  /** `${scope}\0${period}` → the period it holds and what was charged in it. */
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly ledger: UsageLedger) {}

  /** Charged in the budget's current period: the whole tenant's (`keyId` undefined) or one key's. */
  spent(budget: Budget | null, keyId: string | undefined, now: number): number {
    if (!budget) return 0;
    const name = `${keyId ?? "tenant"}\u0000${budget.period}`;
    const entry = this.#entries.get(name);
    if (entry && entry.start <= now && now < entry.end) return entry.nano;
    const start = periodStart(budget.period, now);
    const fresh = { start, end: periodEnd(budget.period, now), nano: this.ledger.spentSince(start, keyId) };
    this.#entries.set(name, fresh);
    return fresh.nano;
  }

  /** A settled turn's cost, added to every period held for its tenant and its key that contains `at`. */
  charge(keyId: string, at: number, nano: number): void {
    for (const [name, entry] of this.#entries) {
      const scope = name.slice(0, name.indexOf("\u0000"));
      if ((scope === "tenant" || scope === keyId) && entry.start <= at && at < entry.end) entry.nano += nano;
    }
  }
}
