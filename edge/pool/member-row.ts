/** A pool member's SQLite row (PoolDO's `members` table) and how placement and the checks see it. */
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
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
  if (!columns.some((c) => c.name === "up_since")) sql.exec("ALTER TABLE members ADD COLUMN up_since INTEGER");
  if (!columns.some((c) => c.name === "placed_at")) {
    sql.exec("ALTER TABLE members ADD COLUMN placed_at INTEGER NOT NULL DEFAULT 0");
  }
}

/** A heartbeat's row (the report, and what the pool decided about it). */
export interface MemberWrite {
  report: WorkerReport;
  region: string;
  isStatic: boolean;
  ceiling: number;
  now: number;
  drain: string | null;
  upSince: number;
}

/** Insert or refresh a worker's row from its heartbeat (the placements counted since the last one reset). */
export function writeMember(sql: SqlStorage, m: MemberWrite): void {
  const { report } = m;
  sql.exec(
    `INSERT INTO members (id, url, region, static, boot, model, seq_total, ceiling, seq_free, queue, queue_cap,
       active, resident, prefixes, pending, last_heartbeat, down_until, drain, up_since)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET url = excluded.url, region = excluded.region, static = excluded.static,
       boot = excluded.boot, model = excluded.model, seq_total = excluded.seq_total, ceiling = excluded.ceiling,
       seq_free = excluded.seq_free, queue = excluded.queue, queue_cap = excluded.queue_cap,
       active = excluded.active, resident = excluded.resident, prefixes = excluded.prefixes, pending = 0,
       last_heartbeat = excluded.last_heartbeat, down_until = excluded.down_until, drain = excluded.drain,
       up_since = excluded.up_since`,
    report.id,
    report.url,
    m.region,
    m.isStatic ? 1 : 0,
    report.boot,
    report.modelIdentity,
    report.sequencesTotal,
    m.ceiling,
    Math.min(report.sequencesFree, report.sequencesTotal),
    report.queueDepth,
    report.queueCapacity,
    report.activeRequests,
    report.residentSessions,
    JSON.stringify(report.prefixes),
    m.now,
    report.leaving ? FOREVER : null,
    m.drain,
    m.upSince,
  );
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
  /** Since when it has been up without a break (ms; null: always, a static member never heard from). */
  up_since: number | null;
  /** When (ms) the pool last placed a session on it (0: never); heartbeats leave it. */
  placed_at: number;
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
    upSince: row.up_since ?? 0,
    activeRequests: row.active,
    residentSessions: row.resident,
    pending: row.pending,
    lastPlacedAt: row.placed_at,
    prefixes: JSON.parse(row.prefixes) as string[],
    lastHeartbeat: row.last_heartbeat,
  };
}
