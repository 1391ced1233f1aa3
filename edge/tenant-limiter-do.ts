/**
 * TenantLimiterDO: one per tenant (named by the tenant id), the per-tenant concurrency and rate
 * limits. A Durable Object per tenant, not a counter in an existing one: SessionDOs are per
 * conversation (a tenant's limit spans all of them) and a PoolDO is per region (every tenant's
 * requests would queue on one object). The state is tiny and lives in SQLite, so an object evicted
 * while streams are open still counts them: in-flight leases (each expires after LEASE_MS, should
 * its edge request die without releasing) and one token bucket.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "./env.ts";
import type { TenantLimits } from "./tenant-limits.ts";

/** A lease older than this is stale (its edge request died without releasing it). */
const LEASE_MS = 15 * 60_000;

export type Admission = { ok: true } | { ok: false; reason: "concurrency" | "rate"; retryAfterS: number };

export class TenantLimiterDO extends DurableObject<Env> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec("CREATE TABLE IF NOT EXISTS leases (request_id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)");
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS bucket (id INTEGER PRIMARY KEY, tokens REAL NOT NULL, at INTEGER NOT NULL)",
    );
  }

  async acquire(requestId: string, limits: TenantLimits): Promise<Admission> {
    const now = Date.now();
    this.#sql.exec("DELETE FROM leases WHERE expires_at < ?", now);
    if (limits.concurrent > 0) {
      const active = this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM leases").one().n;
      if (active >= limits.concurrent) return { ok: false, reason: "concurrency", retryAfterS: 1 };
    }
    if (limits.perMinute > 0) {
      const row = this.#sql
        .exec<{ tokens: number; at: number }>("SELECT tokens, at FROM bucket WHERE id = 1")
        .toArray()[0];
      const perMs = limits.perMinute / 60_000;
      const tokens = Math.min(limits.perMinute, (row?.tokens ?? limits.perMinute) + (now - (row?.at ?? now)) * perMs);
      if (tokens < 1)
        return { ok: false, reason: "rate", retryAfterS: Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)) };
      this.#sql.exec("INSERT OR REPLACE INTO bucket (id, tokens, at) VALUES (1, ?, ?)", tokens - 1, now);
    }
    this.#sql.exec("INSERT OR REPLACE INTO leases (request_id, expires_at) VALUES (?, ?)", requestId, now + LEASE_MS);
    return { ok: true };
  }

  async release(requestId: string): Promise<void> {
    this.#sql.exec("DELETE FROM leases WHERE request_id = ?", requestId);
  }
}
