/**
 * Soft state of a Durable Object (a lease, a rate bucket) that lives in the object's memory first
 * and reaches its SQLite only when it outlives `SOFT_STATE_WRITE_MS`. The object's memory is
 * authoritative while it lives (one instance, one thread); the delayed write is what a restarted
 * instance finds. So a short turn's lease is taken and given back without a write, a long one's is
 * written once, a tenant's bucket at most once per delay under load, and no caller waits for a
 * commit (an fsync under local workerd, a replicated confirmation on Cloudflare) on its way to the
 * GPU worker. What a crash can lose is the last `SOFT_STATE_WRITE_MS` of soft state; an eviction
 * waits for the timer (objects are evicted only after seconds of idleness).
 */

/** How long soft state may live only in memory before it is written. */
export const SOFT_STATE_WRITE_MS = 500;

export class WriteBehind {
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** `write` persists the object's current soft state (synchronous SQL). */
  constructor(private readonly write: () => void) {}

  /** The soft state changed: write it `SOFT_STATE_WRITE_MS` from the first change, unless `written()` first. */
  changed(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.write();
    }, SOFT_STATE_WRITE_MS);
  }

  /** Write now what is pending, if anything (a test that looks at storage without waiting for the timer). */
  flush(): void {
    if (this.#timer === undefined) return;
    this.written();
    this.write();
  }

  /** A durable write just included the soft state: nothing is pending. */
  written(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
