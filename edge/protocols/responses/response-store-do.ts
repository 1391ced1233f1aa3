/**
 * ResponseStoreDO: the stored responses of one session (named by its session id), for
 * `previous_response_id`, `GET` and `DELETE /v1/responses/{id}`. A record keeps the response object
 * and the input items it added; a chain of records (parent pointers) rebuilds the conversation.
 * Bounded: every record expires (TTL, refreshed along a chain when a child is stored), and a
 * session keeps at most MAX_RECORDS records / MAX_BYTES bytes (the soonest-expiring go first).
 * Records are JSON split into chunks below SQLite's row limit. Another tenant sees nothing.
 * After every change a session's object reports what it holds per tenant to that tenant's ledger
 * (one more object of this class, record-ledger.ts), which the per-tenant quota reads
 * (record-quota.ts).
 */
import { DurableObject } from "cloudflare:workers";
import { log } from "../../core/log.ts";
import { ledgerName, RecordLedger, type RecordUsage, type SessionHolding } from "./record-ledger.ts";
import type { InputItem, ResponseObject } from "./request/types.ts";
import { outputAsInput } from "./response/response-object.ts";

const MAX_RECORDS = 10_000;
const MAX_BYTES = 256 * 1024 * 1024;
/** Characters per chunk row (≤ 3 UTF-8 bytes each keeps a row under 2 MB). */
const CHUNK_CHARS = 600_000;

export interface StoredResponse {
  response: ResponseObject;
  /** Items this response added before its output: its new input, or the whole history when parentId is null. */
  input: InputItem[];
  /** The previous response in this session, or null when `input` is self-contained. */
  parentId: string | null;
}

export type HistoryResult = { status: "ok"; items: InputItem[] } | { status: "missing"; id: string };

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
    this.#sql.exec(`CREATE TABLE IF NOT EXISTS response_chunks (
      id TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (id, seq))`);
  }

  async put(tenant: string, record: StoredResponse, ttlMs: number): Promise<void> {
    const now = Date.now();
    const expiresAt = now + ttlMs;
    const json = JSON.stringify({ response: record.response, input: record.input });
    this.ctx.storage.transactionSync(() => {
      this.#remove(record.response.id);
      this.#sql.exec(
        "INSERT INTO responses (id, tenant, parent_id, created_at, expires_at, bytes) VALUES (?, ?, ?, ?, ?, ?)",
        record.response.id,
        tenant,
        record.parentId,
        now,
        expiresAt,
        json.length,
      );
      for (let seq = 0; seq * CHUNK_CHARS < json.length; seq++) {
        const data = json.slice(seq * CHUNK_CHARS, (seq + 1) * CHUNK_CHARS);
        this.#sql.exec("INSERT INTO response_chunks (id, seq, data) VALUES (?, ?, ?)", record.response.id, seq, data);
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
      this.#enforceBounds(record.response.id);
    });
    await this.#scheduleCleanup();
    await this.#reportHoldings([tenant]);
  }

  async get(tenant: string, id: string): Promise<ResponseObject | null> {
    return this.#load(tenant, id)?.response ?? null;
  }

  /** The conversation up to and including response `id`: every input and output along its chain. */
  async history(tenant: string, id: string): Promise<HistoryResult> {
    const chain: StoredResponse[] = [];
    for (let next: string | null = id; next !== null; ) {
      const row = this.#live(tenant, next);
      const record = row ? this.#load(tenant, next) : undefined;
      if (!row || !record) return { status: "missing", id: next };
      chain.push({ ...record, parentId: row.parent_id });
      next = row.parent_id;
      if (chain.length > MAX_RECORDS) return { status: "missing", id: next ?? id };
    }
    const items: InputItem[] = [];
    for (const record of chain.reverse()) items.push(...record.input, ...outputAsInput(record.response.output));
    return { status: "ok", items };
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

  #load(tenant: string, id: string): Omit<StoredResponse, "parentId"> | undefined {
    if (!this.#live(tenant, id)) return undefined;
    const chunks = this.#sql
      .exec<{ data: string }>("SELECT data FROM response_chunks WHERE id = ? ORDER BY seq", id)
      .toArray();
    if (chunks.length === 0) return undefined;
    return JSON.parse(chunks.map((c) => c.data).join("")) as Omit<StoredResponse, "parentId">;
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
    this.#sql.exec("DELETE FROM response_chunks WHERE id = ?", id);
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

  async #scheduleCleanup(): Promise<void> {
    const next = this.#sql.exec<{ at: number | null }>("SELECT MIN(expires_at) AS at FROM responses").one().at;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(next);
  }
}
