/**
 * The checkpoint store's disk budget: evict down to it after every write, least valuable first
 * (other models' entries, then by reason weight, then least recently used), and give back half of
 * the local bytes when a write hits a full disk. Never a pinned entry nor the one being written.
 */
import { log } from "../../log.ts";
import type { CheckpointIndex } from "./checkpoint-index.ts";
import type { CheckpointPins } from "./checkpoint-pins.ts";
import { availableBytes, isDiskFull } from "./disk-full.ts";

export class CheckpointBudget {
  readonly #index: CheckpointIndex;
  readonly #pins: CheckpointPins;
  readonly #modelIdentity: string;
  readonly #dir: string;
  readonly #availableBytes: (dir: string) => number;
  /** Frees one checkpoint's local files (with a replica its row stays). */
  readonly #evictLocal: (id: string) => void;
  readonly budgetBytes: number;

  constructor(options: {
    index: CheckpointIndex;
    pins: CheckpointPins;
    modelIdentity: string;
    dir: string;
    budgetBytes: number;
    availableBytes: ((dir: string) => number) | undefined;
    evictLocal: (id: string) => void;
  }) {
    this.#index = options.index;
    this.#pins = options.pins;
    this.#modelIdentity = options.modelIdentity;
    this.#dir = options.dir;
    this.budgetBytes = options.budgetBytes;
    this.#availableBytes = options.availableBytes ?? availableBytes;
    this.#evictLocal = options.evictLocal;
  }

  /** Evict until the total size is within the budget, never `protectedId` nor a pinned entry. */
  evict(protectedId: string | undefined): void {
    let total = this.#index.totalBytes();
    if (total <= this.budgetBytes) return;
    let evicted = 0;
    for (const { id } of this.#index.evictionOrder(this.#modelIdentity)) {
      if (total <= this.budgetBytes) break;
      if (id === protectedId || this.#pins.has(id)) continue;
      this.#evictLocal(id);
      // What it frees: its own chunk only once no other checkpoint links it (counted again).
      total = this.#index.totalBytes();
      evicted++;
    }
    log("checkpoints evicted", { count: evicted, bytes: total, budget: this.budgetBytes });
  }

  /**
   * After a write failed: true when it failed on a full disk and evicting the least valuable half of
   * the local bytes gave some back (the write may be tried once more).
   */
  reclaimAfter(error: unknown): boolean {
    return isDiskFull(error, this.#dir, this.#availableBytes) && this.#reclaim(undefined) > 0;
  }

  /** Evict the least valuable half of the local bytes; how many were evicted (0: nothing to give back). */
  #reclaim(protectedId: string | undefined): number {
    const total = this.#index.totalBytes();
    let left = total;
    let evicted = 0;
    for (const { id, bytes } of this.#index.evictionOrder(this.#modelIdentity)) {
      if (left <= total / 2) break;
      if (id === protectedId || this.#pins.has(id)) continue;
      this.#evictLocal(id);
      left -= bytes;
      evicted++;
    }
    log("checkpoint disk full", { evicted, freed: total - left, bytes: left });
    return evicted;
  }
}
