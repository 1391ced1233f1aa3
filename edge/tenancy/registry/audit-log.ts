/**
 * The audit trail of admin changes (tenants, keys, limits, prices, admin keys, worker credentials),
 * in the registry's SQLite, hash-chained: each row's hash is SHA-256 over the previous row's hash and
 * the row's own canonical JSON (sequence, time, actor, request id, source address, action, tenant,
 * target and diff). Editing, inserting or deleting a row anywhere but at the end breaks the chain at
 * that row (`verify`); cutting rows off the end is caught only against a head hash kept elsewhere
 * (`verify` returns the head for that). Entries never hold a secret: callers pass diffs of settings.
 *
 * Appends are not reentrant: the registry runs every write through one queue.
 */
import type { Page, PageRequest } from "../../core/pages.ts";
import { pageOf } from "../../core/pages.ts";

export type AuditActor = { type: "root" } | { type: "admin_key"; id: string; name: string };

/** What an admin change was, as its route reports it. */
export interface AuditEntry {
  /** `tenant.created`, `api_key.revoked`, `prices.updated`, … */
  action: string;
  actor: AuditActor;
  requestId: string;
  /** The client's address (`cf-connecting-ip`), when known. */
  source: string | null;
  tenant: string | null;
  target: { type: string; id: string };
  /** JSON `{before, after}`: the changed fields before and after (null: did not exist / no longer exists). */
  diff: string;
}

export interface AuditRecord extends AuditEntry {
  id: string;
  seq: number;
  at: number;
  prevHash: string;
  hash: string;
}

export interface AuditFilter {
  tenant?: string | undefined;
  action?: string | undefined;
  actorId?: string | undefined;
  since?: number | undefined;
  until?: number | undefined;
}

export interface AuditVerification {
  ok: boolean;
  rows: number;
  head: { id: string; hash: string } | null;
  /** The first row that does not verify, and why. */
  firstBad?: { id: string; reason: "hash" | "link" | "gap" };
}

const GENESIS = "0".repeat(64);

type Row = {
  seq: number;
  at: number;
  action: string;
  actor: string;
  request_id: string;
  source: string | null;
  tenant: string | null;
  target_type: string;
  target_id: string;
  diff: string;
  prev_hash: string;
  hash: string;
};

export class AuditLog {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS audit (seq INTEGER PRIMARY KEY, at INTEGER NOT NULL, action TEXT NOT NULL,
      actor TEXT NOT NULL, request_id TEXT NOT NULL, source TEXT, tenant TEXT, target_type TEXT NOT NULL,
      target_id TEXT NOT NULL, diff TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL)`);
    sql.exec("CREATE INDEX IF NOT EXISTS audit_tenant ON audit (tenant, seq)");
  }

  /** The next record, chained to the current head (insert it with `insert` before any other append). */
  async prepare(entry: AuditEntry, at: number): Promise<AuditRecord> {
    const head = this.sql.exec<Row>("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").toArray()[0];
    const seq = (head?.seq ?? 0) + 1;
    const prevHash = head?.hash ?? GENESIS;
    const record = { ...entry, id: auditId(seq), seq, at, prevHash, hash: "" };
    return { ...record, hash: await chainHash(prevHash, record) };
  }

  insert(record: AuditRecord): void {
    this.sql.exec(
      "INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      record.seq,
      record.at,
      record.action,
      JSON.stringify(record.actor),
      record.requestId,
      record.source,
      record.tenant,
      record.target.type,
      record.target.id,
      record.diff,
      record.prevHash,
      record.hash,
    );
  }

  /** Newest first; `after_id` pages to older records, `before_id` to newer ones. */
  page(filter: AuditFilter, request: PageRequest): Page<AuditRecord> | undefined {
    const clauses: string[] = [];
    const values: (string | number)[] = [];
    const where = (clause: string, value: string | number | undefined) => {
      if (value === undefined) return;
      clauses.push(clause);
      values.push(value);
    };
    where("tenant = ?", filter.tenant);
    where("action = ?", filter.action);
    where("json_extract(actor, '$.id') = ?", filter.actorId);
    where("at >= ?", filter.since);
    where("at < ?", filter.until);
    const cursor = request.beforeId ?? request.afterId;
    const cursorSeq = cursor === undefined ? undefined : seqOf(cursor);
    if (cursor !== undefined && cursorSeq === undefined) return undefined;
    if (request.beforeId !== undefined) where("seq > ?", cursorSeq);
    else where("seq < ?", cursorSeq);
    const filterSql = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    const order = request.beforeId !== undefined ? "ASC" : "DESC";
    const rows = this.sql
      .exec<Row>(`SELECT * FROM audit ${filterSql} ORDER BY seq ${order} LIMIT ?`, ...values, request.limit + 1)
      .toArray()
      .map(recordOf);
    if (request.beforeId !== undefined) rows.reverse();
    return pageOf(rows, request);
  }

  /** Recompute the chain from the first row: the first edited, inserted or missing row is named. */
  async verify(): Promise<AuditVerification> {
    let prev = GENESIS;
    let expectedSeq = 1;
    let rows = 0;
    for (const row of this.sql.exec<Row>("SELECT * FROM audit ORDER BY seq")) {
      const record = recordOf(row);
      rows++;
      if (record.seq !== expectedSeq)
        return { ok: false, rows, head: null, firstBad: { id: record.id, reason: "gap" } };
      if (record.prevHash !== prev) return { ok: false, rows, head: null, firstBad: { id: record.id, reason: "link" } };
      if ((await chainHash(prev, record)) !== record.hash) {
        return { ok: false, rows, head: null, firstBad: { id: record.id, reason: "hash" } };
      }
      prev = record.hash;
      expectedSeq++;
    }
    return { ok: true, rows, head: rows === 0 ? null : { id: auditId(expectedSeq - 1), hash: prev } };
  }
}

function auditId(seq: number): string {
  return `audit_${seq}`;
}

function seqOf(id: string): number | undefined {
  const match = /^audit_(\d{1,15})$/.exec(id);
  return match ? Number(match[1]) : undefined;
}

function recordOf(row: Row): AuditRecord {
  return {
    id: auditId(row.seq),
    seq: row.seq,
    at: row.at,
    action: row.action,
    actor: JSON.parse(row.actor) as AuditActor,
    requestId: row.request_id,
    source: row.source,
    tenant: row.tenant,
    target: { type: row.target_type, id: row.target_id },
    diff: row.diff,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** SHA-256 (hex) of the previous hash and the record's canonical JSON (everything but the hashes). */
async function chainHash(prevHash: string, record: AuditRecord): Promise<string> {
  const { hash: _hash, prevHash: _prev, id: _id, ...fields } = record;
  const text = `${prevHash}\n${canonicalJson(fields)}`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A diff as an audit entry holds it: canonical JSON of `{before, after}`. */
export function auditDiff(before: unknown, after: unknown): string {
  return canonicalJson({ before: before ?? null, after: after ?? null });
}

/** JSON with every object's keys sorted, so the same record always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
