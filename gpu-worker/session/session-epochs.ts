/** The newest epoch (the SessionDO bumps it whenever a session moves) seen per session; bounded, kept after parking. */
const MAX_EPOCHS = 100_000;

export class SessionEpochs {
  readonly #epochs = new Map<string, number>();

  /**
   * Record a request's epoch for the session `key`: "stale" when older than one already served;
   * otherwise "ok" with `superseded`, the epoch it replaced when it is newer than a known one (the
   * session ran elsewhere meanwhile). Epoch 0 (a caller without a SessionDO) is always admitted.
   */
  admit(key: string, epoch: number): { verdict: "ok" | "stale"; superseded?: number } {
    if (epoch <= 0) return { verdict: "ok" };
    const known = this.#epochs.get(key) ?? 0;
    if (epoch < known) return { verdict: "stale" };
    if (epoch === known) return { verdict: "ok" };
    this.#epochs.delete(key);
    this.#epochs.set(key, epoch);
    if (this.#epochs.size > MAX_EPOCHS) this.#epochs.delete(this.#epochs.keys().next().value ?? "");
    return known > 0 ? { verdict: "ok", superseded: known } : { verdict: "ok" };
  }
}
