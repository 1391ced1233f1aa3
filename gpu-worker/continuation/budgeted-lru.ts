/**
 * A map that keeps its most recently used entries within a count and a cost budget (the least
 * recently used go first). The bookkeeping shared by the worker's in-memory continuation caches.
 */
export class BudgetedLru<V> {
  readonly #entries = new Map<string, V>();
  readonly #maxEntries: number;
  readonly #maxCost: number;
  readonly #costOf: (key: string, value: V) => number;
  #cost = 0;

  constructor(limits: { maxEntries: number; maxCost: number }, costOf: (key: string, value: V) => number) {
    this.#maxEntries = limits.maxEntries;
    this.#maxCost = limits.maxCost;
    this.#costOf = costOf;
  }

  get size(): number {
    return this.#entries.size;
  }

  get cost(): number {
    return this.#cost;
  }

  set(key: string, value: V): void {
    this.delete(key);
    this.#entries.set(key, value);
    this.#cost += this.#costOf(key, value);
    while (this.#entries.size > this.#maxEntries || this.#cost > this.#maxCost) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) return;
      this.delete(oldest.value);
    }
  }

  /** The value, now the most recently used. */
  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value !== undefined) {
      this.#entries.delete(key);
      this.#entries.set(key, value);
    }
    return value;
  }

  delete(key: string): void {
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#entries.delete(key);
    this.#cost -= this.#costOf(key, old);
  }
}
