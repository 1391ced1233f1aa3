/**
 * TenantLimiterDO: one per tenant (named by the tenant id), the per-tenant concurrency and rate
 * limits. A Durable Object per tenant, not a counter in an existing one: SessionDOs are per
 * conversation (a tenant's limit spans all of them) and a PoolDO is per region (every tenant's
 * requests would queue on one object). Its state (in-flight leases, each expiring after LEASE_MS
 * should its edge request die without releasing it, and one token bucket) is soft state
 * (write-behind.ts): the object's memory decides every admission, and SQLite gets what outlives
 * the write delay, so a request is admitted without waiting for a commit, a short request's lease
 * is never written, and an object evicted while streams are open still counts them.
 */
import { DurableObject } from "cloudflare:workers";
import type { TenantLimits } from "../config/tenant-limits.ts";
import { WriteBehind } from "../core/write-behind.ts";

/** A lease older than this is stale (its edge request died without releasing it). */
const LEASE_MS = 15 * 60_000;

export type Admission = { ok: true } | { ok: false; reason: "concurrency" | "rate"; retryAfterS: number };

interface Bucket {
  tokens: number;
  at: number;
}

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface TenantLimiterBindings {
  /** Per-tenant concurrency and rate limits, one object per tenant. */
  TENANTS: DurableObjectNamespace<TenantLimiterDO>;
}

export class TenantLimiterDO extends DurableObject<unknown> {
  readonly #sql: SqlStorage;
  /** Requests in flight: request id → when its lease expires. */
  readonly #leases = new Map<string, number>();
  /** The leases SQLite holds (a subset of #leases once written; stale ones until then). */
  readonly #leasesWritten = new Set<string>();
  #bucket: Bucket | undefined;
  #bucketChanged = false;
  readonly #write = new WriteBehind(() => this.#writeState());

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS leases (request_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)");
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS bucket (id INTEGER PRIMARY KEY, tokens REAL NOT NULL, at INTEGER NOT NULL)",
    );
    for (const row of this.#sql.exec<{ request_id: string; expires_at: number }>("SELECT * FROM leases")) {
      this.#leases.set(row.request_id, row.expires_at);
      this.#leasesWritten.add(row.request_id);
    }
    this.#bucket = this.#sql
      .exec<{ tokens: number; at: number }>("SELECT tokens, at FROM bucket WHERE id = 1")
      .toArray()[0];
  }

  async acquire(requestId: string, limits: TenantLimits): Promise<Admission> {
    const now = Date.now();
    for (const [id, expiresAt] of this.#leases) if (expiresAt < now) this.#leases.delete(id);
    if (limits.concurrent > 0 && this.#leases.size >= limits.concurrent) {
      return { ok: false, reason: "concurrency", retryAfterS: 1 };
    }
    if (limits.perMinute > 0) {
      const perMs = limits.perMinute / 60_000;
      const bucket = this.#bucket;
      const tokens = Math.min(
        limits.perMinute,
        (bucket?.tokens ?? limits.perMinute) + (now - (bucket?.at ?? now)) * perMs,
      );
      if (tokens < 1)
        return { ok: false, reason: "rate", retryAfterS: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
      this.#bucket = { tokens: tokens - 1, at: now };
      this.#bucketChanged = true;
    }
    this.#leases.set(requestId, now + LEASE_MS);
    this.#write.changed();
    return { ok: true };
  }

  async release(requestId: string): Promise<void> {
    this.#leases.delete(requestId);
    if (this.#leasesWritten.has(requestId)) this.#write.changed();
  }

  /** Bring SQLite to the object's state: the bucket if it changed, the leases in flight now. */
  #writeState(): void {
    this.ctx.storage.transactionSync(() => {
      if (this.#bucketChanged && this.#bucket) {
        this.#sql.exec(
          "INSERT OR REPLACE INTO bucket (id, tokens, at) VALUES (1, ?, ?)",
          this.#bucket.tokens,
          this.#bucket.at,
        );
      }
      for (const id of this.#leasesWritten) {
        if (!this.#leases.has(id)) this.#sql.exec("DELETE FROM leases WHERE request_id = ?", id);
      }
      for (const [id, expiresAt] of this.#leases) {
        if (!this.#leasesWritten.has(id)) {
          this.#sql.exec("INSERT OR REPLACE INTO leases (request_id, expires_at) VALUES (?, ?)", id, expiresAt);
        }
      }
    });
    this.#bucketChanged = false;
    this.#leasesWritten.clear();
    for (const id of this.#leases.keys()) this.#leasesWritten.add(id);
  }
}
