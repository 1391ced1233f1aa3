/**
 * The price table as one authority knows it: fetched from the registry and kept `PRICE_CACHE_MS`.
 * A reservation against a budget waits for a fresh table; everything else (costing a settled turn)
 * uses the last one and refreshes it in the background. So a price change reaches every tenant's
 * budgets and costs within `PRICE_CACHE_MS`, and each turn records the version that costed it.
 */
import { EMPTY_PRICES, type PriceTable } from "../pricing.ts";

export const PRICE_CACHE_MS = 30_000;

export class PriceCache {
  #table: PriceTable = EMPTY_PRICES;
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<PriceTable> | undefined;

  constructor(private readonly fetchTable: () => Promise<PriceTable>) {}

  /** The table, fetched first when it is older than `PRICE_CACHE_MS` (or never fetched). */
  async fresh(now: number): Promise<PriceTable> {
    if (now - this.#fetchedAt < PRICE_CACHE_MS) return this.#table;
    this.#pending ??= this.fetchTable()
      .then((table) => {
        this.#table = table;
        this.#fetchedAt = now;
        return table;
      })
      .finally(() => {
        this.#pending = undefined;
      });
    return this.#pending;
  }

  /** The last table fetched (empty before the first), refreshed in the background when old. */
  cached(now: number): PriceTable {
    if (now - this.#fetchedAt >= PRICE_CACHE_MS) this.fresh(now).catch(() => undefined);
    return this.#table;
  }

  /** Forget the table: the next `fresh` fetches (after a price change through this edge). */
  invalidate(): void {
    this.#fetchedAt = Number.NEGATIVE_INFINITY;
  }
}
