/**
 * Checkpoints being loaded. A pinned entry is skipped by eviction, and deleting its files is deferred
 * until its last load ends, so the store never deletes a file it is about to load.
 */
export class CheckpointPins {
  readonly #counts = new Map<string, number>();
  readonly #deferred = new Set<string>();

  /** Whether a load of `id` is in progress. */
  has(id: string): boolean {
    return this.#counts.has(id);
  }

  /** Start a load of `id` (loads of one entry may overlap). */
  pin(id: string): void {
    this.#counts.set(id, (this.#counts.get(id) ?? 0) + 1);
  }

  /** End a load of `id`. True when its files were removed meanwhile and may now be deleted. */
  unpin(id: string): boolean {
    const left = (this.#counts.get(id) ?? 1) - 1;
    if (left > 0) {
      this.#counts.set(id, left);
      return false;
    }
    this.#counts.delete(id);
    return this.#deferred.delete(id);
  }

  /** The files of `id` are to be deleted: true when it is pinned and this is deferred to its last unpin. */
  deferIfPinned(id: string): boolean {
    if (!this.#counts.has(id)) return false;
    this.#deferred.add(id);
    return true;
  }
}
