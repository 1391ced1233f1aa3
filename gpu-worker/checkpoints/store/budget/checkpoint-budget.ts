/**
 * The checkpoint store's disk budget: evict down to it after every write, least valuable first
 * (other models' entries, then by reason weight, then least recently used), and give back half of
 * the local bytes when a write hits a full disk. Never a pinned entry nor the one being written.
 *
 * Per-tenant share (work-conserving): while the store is within its budget any tenant may use all
 * of it; once it is over, tenants holding more than `tenantShareBytes` lose their own least valuable
 * checkpoints first, down to their share, and only then does the budget's global order apply. So a
 * tenant filling the disk evicts its own checkpoints, never another tenant's, while the others hold
 * less than budget - share together. Evictions are counted by reason (`evictions`, a worker metric).
 */
import { log } from "../../../log.ts";
import type { CheckpointIndex } from "../checkpoint-index.ts";
import type { CheckpointPins } from "../checkpoint-pins.ts";
import { EVICTION_REASONS, type EvictionReason } from "./checkpoint-tenant-share.ts";
import { availableBytes, isDiskFull } from "./disk-full.ts";

/** Evicted sessions remembered for miss reasons (the oldest forgotten first). */
const EVICTED_SESSIONS_KEPT = 4096;

const sessionKey = (tenant: string, sessionId: string) => `${tenant}\u0000${sessionId}`;

export class CheckpointBudget {
  readonly #index: CheckpointIndex;
  readonly #pins: CheckpointPins;
  readonly #modelIdentity: string;
  readonly #dir: string;
  readonly #availableBytes: (dir: string) => number;
  /** Frees one checkpoint's local files (with a replica its row stays). */
  readonly #evictLocal: (id: string) => void;
  readonly budgetBytes: number;
  /** What one tenant keeps when the store is over budget (≥ budgetBytes: no share). */
  readonly tenantShareBytes: number;
  /** Sessions whose checkpoint was evicted, by why (bounded; a later write of the session clears it). */
  readonly #evictedSessions = new Map<string, EvictionReason>();
  readonly #evictions = Object.fromEntries(EVICTION_REASONS.map((r) => [r, 0])) as Record<EvictionReason, number>;

  constructor(options: {
    index: CheckpointIndex;
    pins: CheckpointPins;
    modelIdentity: string;
    dir: string;
    budgetBytes: number;
    /** Default: half the budget. */
    tenantShareBytes?: number | undefined;
    availableBytes: ((dir: string) => number) | undefined;
    evictLocal: (id: string) => void;
  }) {
    this.#index = options.index;
    this.#pins = options.pins;
    this.#modelIdentity = options.modelIdentity;
    this.#dir = options.dir;
    this.budgetBytes = options.budgetBytes;
    this.tenantShareBytes = options.tenantShareBytes ?? Math.floor(options.budgetBytes / 2);
    this.#availableBytes = options.availableBytes ?? availableBytes;
    this.#evictLocal = options.evictLocal;
  }

  /** Evict until the total size is within the budget, never `protectedId` nor a pinned entry. */
  evict(protectedId: string | undefined): void {
    let total = this.#index.totalBytes();
    if (total <= this.budgetBytes) return;
    const byShare = this.#evictOverShares(protectedId);
    total = this.#index.totalBytes();
    let evicted = 0;
    for (const { id } of this.#index.evictionOrder(this.#modelIdentity)) {
      if (total <= this.budgetBytes) break;
      if (id === protectedId || this.#pins.has(id)) continue;
      this.#evict(id, "budget");
      // What it frees: its own chunk only once no other checkpoint links it (counted again).
      total = this.#index.totalBytes();
      evicted++;
    }
    this.#evictions.budget += evicted;
    log("checkpoints evicted", { count: evicted, tenantShare: byShare, bytes: total, budget: this.budgetBytes });
  }

  /** Why the newest checkpoint of a session was evicted, when it was (and none was written since). */
  evictedSession(tenant: string, sessionId: string): EvictionReason | undefined {
    return this.#evictedSessions.get(sessionKey(tenant, sessionId));
  }

  /** A checkpoint of the session was written: an earlier eviction no longer explains a miss. */
  written(tenant: string, sessionId: string): void {
    if (sessionId !== "") this.#evictedSessions.delete(sessionKey(tenant, sessionId));
  }

  #evict(id: string, reason: EvictionReason): void {
    const meta = this.#index.get(id)?.meta;
    this.#evictLocal(id);
    if (!meta || meta.sessionId === "") return;
    const key = sessionKey(meta.tenant, meta.sessionId);
    this.#evictedSessions.delete(key);
    this.#evictedSessions.set(key, reason);
    for (const oldest of this.#evictedSessions.keys()) {
      if (this.#evictedSessions.size <= EVICTED_SESSIONS_KEPT) break;
      this.#evictedSessions.delete(oldest);
    }
  }

  /** Evictions since open, by reason. */
  get evictions(): Readonly<Record<EvictionReason, number>> {
    return { ...this.#evictions };
  }

  /** Over budget: each tenant above its share loses its own least valuable checkpoints, down to the share. */
  #evictOverShares(protectedId: string | undefined): number {
    if (this.tenantShareBytes >= this.budgetBytes) return 0;
    const shares = this.#index.tenantShares;
    let evicted = 0;
    for (const { tenant, bytes } of shares.tenantsOver(this.tenantShareBytes)) {
      let held = bytes;
      for (const { id, bytes: own } of shares.evictionOrder(tenant, this.#modelIdentity)) {
        if (held <= this.tenantShareBytes || this.#index.totalBytes() <= this.budgetBytes) break;
        if (id === protectedId || this.#pins.has(id)) continue;
        this.#evict(id, "tenant-share");
        held -= own;
        evicted++;
      }
      if (this.#index.totalBytes() <= this.budgetBytes) break;
    }
    this.#evictions["tenant-share"] += evicted;
    return evicted;
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
      this.#evict(id, "disk-full");
      left -= bytes;
      evicted++;
    }
    this.#evictions["disk-full"] += evicted;
    log("checkpoint disk full", { evicted, freed: total - left, bytes: left });
    return evicted;
  }
}
