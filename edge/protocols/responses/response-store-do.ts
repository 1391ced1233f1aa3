/**
 * ResponseStoreDO: the stored responses of one session (named by its session id), for
 * `previous_response_id`, `GET` and `DELETE /v1/responses/{id}`. A record keeps the response object
 * and the input items it added; a chain of records (parent pointers) rebuilds the conversation.
 * Bounded: every record expires (TTL, refreshed along a chain when a child is stored), and a
 * session keeps at most MAX_RECORDS records / MAX_BYTES bytes (the soonest-expiring go first).
 * A record arrives sealed (sealed-records.ts: the edge seals it under the tenant's key before the
 * call, and opens what comes back), so this object holds ids, parent pointers, sizes and
 * ciphertext, split into chunks below SQLite's row limit, never a record's text or the key.
 * Another tenant sees nothing. Rows from before sealing (plaintext `response_chunks`) are dropped
 * when the object first starts with this code: plaintext cannot be authenticated, and keeping it
 * readable until it expires would keep it at rest.
 * After every change a session's object reports what it holds per tenant to that tenant's ledger
 * (one more object of this class, record-ledger.ts), which the per-tenant quota reads
 * (record-quota.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { log } from "../../core/log.ts";
import { ledgerName, RecordLedger, type RecordUsage, type SessionHolding } from "./record-ledger.ts";

const MAX_RECORDS = 10_000;
const MAX_BYTES = 256 * 1024 * 1024;
/** Ciphertext bytes per chunk row (a row stays under SQLite's 2 MB). */
const CHUNK_BYTES = 1 << 20;
const encoder = new TextEncoder();

/** A record as this object holds it: id and parent in the clear (the chain), the rest sealed (sealRecord). */
export interface SealedRecord {
  id: string;
  parentId: string | null;
  sealed: Uint8Array<ArrayBuffer>;
}

/** A chain of sealed records, newest first, or the first link that is not here. */
export type SealedChain = { status: "ok"; records: SealedRecord[] } | { status: "missing"; id: string };

type RecordRow = { id: string; tenant: string; parent_id: string | null; expires_at: number; bytes: number };

/** The binding this object is reached through (wrangler.toml); code that calls it takes this, not the whole Env. */
export interface ResponseStoreBindings {
  /** Stored Responses API records, one object per session. */
  RESPONSES: DurableObjectNamespace<ResponseStoreDO>;
}

export class ResponseStoreDO extends DurableObject<ResponseStoreBindings> {
  readonly #sql: SqlStorage;
  /** Only in a tenant's ledger object (named by ledgerName). */
  #ledger: RecordLedger | undefined;

  constructor(ctx: DurableObjectState, env: ResponseStoreBindings) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS responses (
      id TEXT PRIMARY KEY, tenant TEXT NOT NULL, parent_id TEXT, created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL, bytes INTEGER NOT NULL)`);
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS sealed_chunks (
      id TEXT NOT NULL, seq INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (id, seq))`);
    if (this.#hasPlaintextRows()) {
      void ctx.blockConcurrencyWhile(async () => {
        const tenants = this.#dropPlaintextRows();
        await this.#scheduleCleanup();
        await this.#reportHoldings(tenants);
      });
    }
  }

  /** Store a sealed record for `tenant` (sealRecord), replacing one with the same id. */
  async put(tenant: string, record: SealedRecord, ttlMs: number): Promise<void> {
    const now = Date.now();
    const expiresAt = now + ttlMs;
    const sealed = record.sealed;
    this.ctx.storage.transactionSync(() => {
      this.#remove(record.id);
      this.#sql.exec(
        "INSERT INTO responses (id, tenant, parent_id, created_at, expires_at, bytes) VALUES (?, ?, ?, ?, ?, ?)",
        record.id,
        tenant,
        record.parentId,
        now,
        expiresAt,
        sealed.byteLength,
      );
      for (let seq = 0; seq * CHUNK_BYTES < sealed.byteLength; seq++) {
        const data = sealed.slice(seq * CHUNK_BYTES, (seq + 1) * CHUNK_BYTES).buffer;
        this.#sql.exec("INSERT INTO sealed_chunks (id, seq, data) VALUES (?, ?, ?)", record.id, seq, data);
      }
      // A chain lives as long as its newest response.
      for (let id = record.parentId; id !== null; ) {
        const parent = this.#row(id);
        if (!parent) break;
        if (parent.expires_at < expiresAt) {
          this.#sql.exec("UPDATE responses SET expires_at = ? WHERE id = ?", expiresAt, id);
        }
        id = parent.parent_id;
      }
      this.#enforceBounds(record.id);
    });
    await this.#scheduleCleanup();
    await this.#reportHoldings([tenant]);
  }

  /** The sealed record `id` of `tenant`, or null when it is unknown, expired or another tenant's. */
  async get(tenant: string, id: string): Promise<Uint8Array<ArrayBuffer> | null> {
    return this.#live(tenant, id) ? (this.#sealed(id) ?? null) : null;
  }

  /** The sealed records along the chain ending at `id`, newest first, or the first missing link. */
  async chain(tenant: string, id: string): Promise<SealedChain> {
    const records: SealedRecord[] = [];
    for (let next: string | null = id; next !== null; ) {
      const row = this.#live(tenant, next);
      const sealed = row ? this.#sealed(next) : undefined;
      if (!row || !sealed) return { status: "missing", id: next };
      records.push({ id: next, parentId: row.parent_id, sealed });
      next = row.parent_id;
      if (records.length > MAX_RECORDS) return { status: "missing", id: next ?? id };
    }
    return { status: "ok", records };
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    if (!this.#live(tenant, id)) return false;
    this.ctx.storage.transactionSync(() => this.#remove(id));
    await this.#reportHoldings([tenant]);
    return true;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const expired = this.#sql
      .exec<{ id: string; tenant: string }>("SELECT id, tenant FROM responses WHERE expires_at <= ?", now)
      .toArray();
    this.ctx.storage.transactionSync(() => {
      for (const { id } of expired) this.#remove(id);
    });
    await this.#scheduleCleanup();
    await this.#reportHoldings([...new Set(expired.map((r) => r.tenant))]);
  }

  /** Ledger role: what `session` (a store object's id) now holds for this ledger's tenant. */
  async reportHolding(session: string, holding: SessionHolding | null): Promise<void> {
    this.#ledgerTable().report(session, holding);
  }

  /** Ledger role: what this ledger's tenant holds across its sessions. */
  async usage(): Promise<RecordUsage> {
    return this.#ledgerTable().usage(Date.now());
  }

  #ledgerTable(): RecordLedger {
    this.#ledger ??= new RecordLedger(this.#sql);
    return this.#ledger;
  }

  /** Tell each tenant's ledger what this session holds for it now (a failure is logged; it heals at expiry). */
  async #reportHoldings(tenants: string[]): Promise<void> {
    const session = this.ctx.id.toString();
    for (const tenant of tenants) {
      const row = this.#sql
        .exec<{ bytes: number | null; records: number; soonest: number | null; latest: number | null }>(
          `SELECT SUM(bytes) AS bytes, COUNT(*) AS records, MIN(expires_at) AS soonest, MAX(expires_at) AS latest
           FROM responses WHERE tenant = ?`,
          tenant,
        )
        .one();
      const holding =
        row.records === 0
          ? null
          : {
              bytes: row.bytes ?? 0,
              records: row.records,
              soonestExpiry: row.soonest ?? 0,
              latestExpiry: row.latest ?? 0,
            };
      try {
        await this.env.RESPONSES.getByName(ledgerName(tenant)).reportHolding(session, holding);
      } catch (error) {
        log("response ledger report failed", { error: String(error) });
      }
    }
  }

  /** The record's chunks joined, or undefined when it has none. */
  #sealed(id: string): Uint8Array<ArrayBuffer> | undefined {
    const chunks = this.#sql
      .exec<{ data: ArrayBuffer | string }>("SELECT data FROM sealed_chunks WHERE id = ? ORDER BY seq", id)
      .toArray();
    // A text value is no chunk this object wrote: its bytes go on and fail to open, like any tampering.
    const parts = chunks.map((c) => (typeof c.data === "string" ? encoder.encode(c.data).buffer : c.data));
    if (parts.length === 0) return undefined;
    const sealed = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
    let at = 0;
    for (const part of parts) {
      sealed.set(new Uint8Array(part), at);
      at += part.byteLength;
    }
    return sealed;
  }

  /** The row if it exists, belongs to `tenant` and has not expired. */
  #live(tenant: string, id: string): RecordRow | undefined {
    const row = this.#row(id);
    return row && row.tenant === tenant && row.expires_at > Date.now() ? row : undefined;
  }

  #row(id: string): RecordRow | undefined {
    return this.#sql
      .exec<RecordRow>("SELECT id, tenant, parent_id, expires_at, bytes FROM responses WHERE id = ?", id)
      .toArray()[0];
  }

  #remove(id: string): void {
    this.#sql.exec("DELETE FROM sealed_chunks WHERE id = ?", id);
    this.#sql.exec("DELETE FROM responses WHERE id = ?", id);
  }

  /** Drop the soonest-expiring records (never `keep`) until the session is within its bounds. */
  #enforceBounds(keep: string): void {
    for (;;) {
      const totals = this.#sql
        .exec<{ n: number; bytes: number | null }>("SELECT COUNT(*) AS n, SUM(bytes) AS bytes FROM responses")
        .one();
      if (totals.n <= MAX_RECORDS && (totals.bytes ?? 0) <= MAX_BYTES) return;
      const victim = this.#sql
        .exec<{ id: string }>("SELECT id FROM responses WHERE id != ? ORDER BY expires_at, created_at LIMIT 1", keep)
        .toArray()[0];
      if (!victim) return;
      this.#remove(victim.id);
    }
  }

  #hasPlaintextRows(): boolean {
    const table = "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'response_chunks'";
    return this.#sql.exec<{ n: number }>(table).one().n > 0;
  }

  /** Drop every record stored before sealing (and their table); the tenants whose holdings changed. */
  #dropPlaintextRows(): string[] {
    return this.ctx.storage.transactionSync(() => {
      const stale = this.#sql
        .exec<{ tenant: string }>(
          "SELECT DISTINCT tenant FROM responses WHERE id NOT IN (SELECT id FROM sealed_chunks)",
        )
        .toArray();
      this.#sql.exec("DELETE FROM responses WHERE id NOT IN (SELECT id FROM sealed_chunks)");
      this.#sql.exec("DROP TABLE response_chunks");
      if (stale.length > 0) log("plaintext response records dropped", { tenants: stale.length });
      return stale.map((row) => row.tenant);
    });
  }

  async #scheduleCleanup(): Promise<void> {
    const next = this.#sql.exec<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM responses").one().at;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }
}
