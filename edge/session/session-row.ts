/** The SessionDO's SQLite tables: the session row (its soft columns written behind), the frontier and the prefix fingerprint. */

/** The columns a continuing `open` changes: soft state, written behind (write-behind.ts). */
export type SoftColumns = Pick<SessionRow, "last_used_at" | "lease_request_id" | "lease_until">;

export type SessionRow = {
  session_id: string;
  tenant: string;
  worker_url: string;
  epoch: number;
  created_at: number;
  last_used_at: number;
  turns: number;
  last_message_id: string | null;
  lease_request_id: string | null;
  lease_until: number | null;
};

/** Create the tables when absent (each object holds one session). */
export function createSessionSchema(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS session (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    session_id TEXT NOT NULL, tenant TEXT NOT NULL, worker_url TEXT NOT NULL, epoch INTEGER NOT NULL,
    created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, turns INTEGER NOT NULL DEFAULT 0,
    last_message_id TEXT, lease_request_id TEXT, lease_until INTEGER)`);
  sql.exec("CREATE TABLE IF NOT EXISTS frontier (position INTEGER PRIMARY KEY, tool_use_id TEXT NOT NULL)");
  sql.exec(
    "CREATE TABLE IF NOT EXISTS prefix (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), fingerprint TEXT NOT NULL)",
  );
}

/** The tool_use ids of the session's last assistant turn, in order. */
export function readFrontier(sql: SqlStorage): string[] {
  return sql
    .exec<{ tool_use_id: string }>("SELECT tool_use_id FROM frontier ORDER BY position")
    .toArray()
    .map((r) => r.tool_use_id);
}

/** The fingerprint of the session's system + tools, when one was recorded. */
export function readPrefix(sql: SqlStorage): string | undefined {
  return sql.exec<{ fingerprint: string }>("SELECT fingerprint FROM prefix").toArray()[0]?.fingerprint;
}

export function writePrefix(sql: SqlStorage, fingerprint: string): void {
  sql.exec("INSERT OR REPLACE INTO prefix (singleton, fingerprint) VALUES (1, ?)", fingerprint);
}

/** A new session row at epoch 1, its lease held by `requestId` until `leaseUntil`. */
export function insertSession(
  sql: SqlStorage,
  session: { sessionId: string; tenant: string; workerUrl: string },
  now: number,
  requestId: string,
  leaseUntil: number,
): void {
  sql.exec(
    `INSERT INTO session (singleton, session_id, tenant, worker_url, epoch, created_at, last_used_at, lease_request_id, lease_until)
     VALUES (1, ?, ?, ?, 1, ?, ?, ?, ?)`,
    session.sessionId,
    session.tenant,
    session.workerUrl,
    now,
    now,
    requestId,
    leaseUntil,
  );
}

/**
 * A recorded turn: turns + 1, its message id and frontier, the last use, and the lease as given (the
 * soft columns go with it). Call inside a transaction.
 */
export function writeTurn(
  sql: SqlStorage,
  messageId: string,
  toolUseIds: readonly string[],
  now: number,
  lease: { id: string | null; until: number | null },
): void {
  sql.exec(
    "UPDATE session SET turns = turns + 1, last_message_id = ?, last_used_at = ?, lease_request_id = ?, lease_until = ?",
    messageId,
    now,
    lease.id,
    lease.until,
  );
  sql.exec("DELETE FROM frontier");
  toolUseIds.forEach((id, position) => {
    sql.exec("INSERT INTO frontier (position, tool_use_id) VALUES (?, ?)", position, id);
  });
}

/** The soft columns written behind. */
export function writeSoftColumns(sql: SqlStorage, soft: SoftColumns): void {
  sql.exec(
    "UPDATE session SET last_used_at = ?, lease_request_id = ?, lease_until = ?",
    soft.last_used_at,
    soft.lease_request_id,
    soft.lease_until,
  );
}
