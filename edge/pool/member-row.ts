/** A pool member's SQLite row (PoolDO's `members` table) and how placement and the checks see it. */
import type { PoolWorker, WorkerState } from "./placement.ts";
import type { MemberView } from "./registration-check.ts";

/** The `members` table (and the columns later versions added to an older one). */
export function createMembersTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS members (
    id TEXT PRIMARY KEY, url TEXT NOT NULL UNIQUE, region TEXT NOT NULL, static INTEGER NOT NULL DEFAULT 0,
    boot TEXT, model TEXT NOT NULL DEFAULT '', seq_total INTEGER NOT NULL DEFAULT 0, ceiling INTEGER,
    seq_free INTEGER NOT NULL DEFAULT 0, queue INTEGER NOT NULL DEFAULT 0, queue_cap INTEGER NOT NULL DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 0, resident INTEGER NOT NULL DEFAULT 0, prefixes TEXT NOT NULL DEFAULT '[]',
    pending INTEGER NOT NULL DEFAULT 0, last_heartbeat INTEGER, down_until INTEGER, drain TEXT)`);
  const columns = sql.exec<{ name: string }>("PRAGMA table_info(members)").toArray();
  if (!columns.some((c) => c.name === "queue_cap")) {
    sql.exec("ALTER TABLE members ADD COLUMN queue_cap INTEGER NOT NULL DEFAULT 0");
  }
}

/** A down state that only a heartbeat ends. */
export const FOREVER = Number.MAX_SAFE_INTEGER;

export type Row = {
  id: string;
  url: string;
  region: string;
  static: number;
  boot: string | null;
  model: string;
  seq_total: number;
  /** The credential's capacity ceiling (null: a static member never heard from). */
  ceiling: number | null;
  seq_free: number;
  queue: number;
  /** The queue's capacity the worker reported (0: not reported). */
  queue_cap: number;
  active: number;
  resident: number;
  prefixes: string;
  pending: number;
  last_heartbeat: number | null;
  down_until: number | null;
  drain: string | null;
};

export function memberView(row: Row): MemberView {
  return {
    id: row.id,
    url: row.url,
    static: row.static === 1,
    lastHeartbeat: row.last_heartbeat,
    downUntil: row.down_until,
  };
}

export function stateOf(row: Row, now: number, timeoutMs: number): WorkerState {
  if (row.down_until !== null && row.down_until > now) return "down";
  if (row.last_heartbeat !== null && now - row.last_heartbeat > timeoutMs) return "down";
  if (row.drain === "drained" || row.drain === "draining") return row.drain;
  return "up";
}

/** Placement counts the worker's claim only up to its credential's ceiling. */
export function toWorker(row: Row, now: number, timeoutMs: number): PoolWorker {
  const total = row.ceiling === null ? row.seq_total : Math.min(row.seq_total, row.ceiling);
  return {
    id: row.id,
    url: row.url,
    region: row.region,
    state: stateOf(row, now, timeoutMs),
    static: row.static === 1,
    modelIdentity: row.model,
    sequencesTotal: total,
    sequencesFree: Math.min(row.seq_free, total),
    capacityCeiling: row.ceiling,
    queueDepth: row.queue,
    queueCapacity: row.queue_cap,
    activeRequests: row.active,
    residentSessions: row.resident,
    pending: row.pending,
    prefixes: JSON.parse(row.prefixes) as string[],
    lastHeartbeat: row.last_heartbeat,
  };
}
