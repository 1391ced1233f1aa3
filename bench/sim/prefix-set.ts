/**
 * The simulated worker's advertised prefixes: the system + tools fingerprints (shared/prefix-fingerprint.ts)
 * of the sessions it served, bounded, most recent first — what GPU workers advertised before issue 45
 * item 2. Real workers now advertise the text-side chains of the KV they still hold
 * (gpu-worker/pool/prefix-advert.ts); the simulation keeps the fingerprint (its trace has no text).
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
