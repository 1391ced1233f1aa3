/**
 * The prompt prefixes (system + tools fingerprints, see shared/prefix-fingerprint.ts) this worker
 * holds KV for: an anchor checkpoint it wrote or loaded, or a session it served. Bounded, most
 * recent first; reported in every heartbeat so the edge can place a new session next to its prefix.
 */
export class PrefixSet {
  readonly #items = new Map<string, number>();

  constructor(readonly capacity = 256) {}

  add(fingerprint: string, now = Date.now()): void {
    this.#items.delete(fingerprint);
    this.#items.set(fingerprint, now);
    while (this.#items.size > this.capacity) {
      const oldest = this.#items.keys().next().value;
      if (oldest === undefined) break;
      this.#items.delete(oldest);
    }
  }

  has(fingerprint: string): boolean {
    return this.#items.has(fingerprint);
  }

  /** Most recent first, at most `limit`. */
  list(limit = this.capacity): string[] {
    return [...this.#items.keys()].reverse().slice(0, limit);
  }
}
