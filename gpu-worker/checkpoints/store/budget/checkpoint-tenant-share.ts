/**
 * Per-tenant shares of the checkpoint budget, read from the store's index: the tenants whose local
 * checkpoints hold more than a share, and one tenant's checkpoints least valuable first (the
 * budget's own order, eviction-order.ts). A tenant's bytes are what
 * its local rows wrote; a linked chunk whose writer is gone counts in the store's total only.
 */
import type Database from "better-sqlite3";
import { evictionOrderSql } from "../eviction-order.ts";

/** Why the budget evicted a checkpoint: a tenant over its share, the whole budget, or a full disk. */
export type EvictionReason = "tenant-share" | "budget" | "disk-full";

export const EVICTION_REASONS: readonly EvictionReason[] = ["tenant-share", "budget", "disk-full"];

export class TenantShareQueries {
  readonly #over;
  readonly #order;

  constructor(db: Database.Database) {
    this.#over = db.prepare<[number], { tenant: string; bytes: number }>(
      `SELECT tenant, SUM(bytes) AS bytes FROM checkpoints WHERE local = 1
       GROUP BY tenant HAVING SUM(bytes) > ? ORDER BY bytes DESC`,
    );
    this.#order = db.prepare<[string, string], { id: string; bytes: number }>(evictionOrderSql("tenant"));
  }

  /** Tenants whose local checkpoints hold more than `shareBytes`, the largest first. */
  tenantsOver(shareBytes: number): { tenant: string; bytes: number }[] {
    return this.#over.all(shareBytes);
  }

  /** One tenant's local checkpoints, least valuable first. */
  evictionOrder(tenant: string, model: string): { id: string; bytes: number }[] {
    return this.#order.all(tenant, model);
  }
}
