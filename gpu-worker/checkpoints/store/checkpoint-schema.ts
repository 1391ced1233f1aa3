import type Database from "better-sqlite3";
import { evictionOrderSql } from "./eviction-order.ts";
import { SESSION_REASONS } from "./types.ts";

/**
 * Bumped on any schema change; an index of another version is dropped (its files become orphans).
 * 4: `text_hash` is the keyed hash of `../state/text-hash.ts` (3 and older: a plain SHA-256).
 */
export const SCHEMA_VERSION = 4;

/** Reasons are fixed literals, so they are spelled into the SQL text rather than bound. */
const SESSION_REASON_LIST = SESSION_REASONS.map((r) => `'${r}'`).join(", ");

/** Tables and indexes of the checkpoint index. */
export const SCHEMA = `
CREATE TABLE IF NOT EXISTS checkpoints (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL,
  session_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  text_hash TEXT NOT NULL,
  text_length INTEGER NOT NULL,
  token_count INTEGER NOT NULL,
  tool_use_ids TEXT NOT NULL,
  tool_use_key TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  model_identity TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  hits INTEGER NOT NULL,
  local INTEGER NOT NULL,
  chain TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS checkpoints_prefix ON checkpoints (tenant, model_identity, text_length);
CREATE INDEX IF NOT EXISTS checkpoints_session ON checkpoints (tenant, session_id);
CREATE INDEX IF NOT EXISTS checkpoints_tool_use ON checkpoints (tenant, tool_use_key);
CREATE INDEX IF NOT EXISTS checkpoints_reason ON checkpoints (reason);
`;

/** One `checkpoints` row as SQLite returns it. */
export interface CheckpointRow {
  id: string;
  tenant: string;
  session_id: string;
  reason: string;
  text_hash: string;
  text_length: number;
  token_count: number;
  tool_use_ids: string;
  tool_use_key: string;
  bytes: number;
  checksum: string;
  model_identity: string;
  created_at: number;
  last_used_at: number;
  hits: number;
  /** 1: its files are in this directory; 0: a replica's checkpoint whose files are fetched on first load. */
  local: number;
  /** JSON array of `ChainLink`s: the earlier state chunks (hard-linked beside its files). */
  chain: string;
}

/** Every statement the index runs, prepared once. */
export function prepareStatements(db: Database.Database) {
  const scoped = "tenant = @tenant AND model_identity = @model";
  return {
    insert: db.prepare<CheckpointRow>(
      `INSERT INTO checkpoints VALUES (@id, @tenant, @session_id, @reason, @text_hash, @text_length, @token_count,
       @tool_use_ids, @tool_use_key, @bytes, @checksum, @model_identity, @created_at, @last_used_at, @hits, @local, @chain)`,
    ),
    insertRemote: db.prepare<CheckpointRow>(
      `INSERT OR IGNORE INTO checkpoints VALUES (@id, @tenant, @session_id, @reason, @text_hash, @text_length,
       @token_count, @tool_use_ids, @tool_use_key, @bytes, @checksum, @model_identity, @created_at, @last_used_at,
       @hits, @local, @chain)`,
    ),
    setLocal: db.prepare<[number, string]>("UPDATE checkpoints SET local = ? WHERE id = ?"),
    localIds: db.prepare<[], string>("SELECT id FROM checkpoints WHERE local = 1").pluck(),
    remoteIdsIn: db
      .prepare<[string, string], string>(
        "SELECT id FROM checkpoints WHERE tenant = ? AND local = 0 AND (session_id = '' OR session_id = ?)",
      )
      .pluck(),
    sameSession: db
      .prepare<[string, string, string], string>(
        "SELECT id FROM checkpoints WHERE tenant = ? AND session_id = ? AND reason = ?",
      )
      .pluck(),
    get: db.prepare<[string], CheckpointRow>("SELECT * FROM checkpoints WHERE id = ?"),
    ids: db.prepare<[], string>("SELECT id FROM checkpoints").pluck(),
    delete: db.prepare<[string]>("DELETE FROM checkpoints WHERE id = ?"),
    touch: db.prepare<[number, string]>("UPDATE checkpoints SET last_used_at = ?, hits = hits + 1 WHERE id = ?"),
    prefixLengths: db
      .prepare<{ tenant: string; model: string; maxLength: number; minTokens: number; limit: number }, number>(
        `SELECT DISTINCT text_length FROM checkpoints WHERE ${scoped} AND text_length <= @maxLength
         AND token_count >= @minTokens ORDER BY text_length DESC LIMIT @limit`,
      )
      .pluck(),
    byPrefix: db.prepare<
      { tenant: string; model: string; length: number; hash: string; minTokens: number },
      CheckpointRow
    >(
      `SELECT * FROM checkpoints WHERE ${scoped} AND text_length = @length AND text_hash = @hash
       AND token_count >= @minTokens ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    ),
    byToolUseKey: db.prepare<{ tenant: string; model: string; key: string }, CheckpointRow>(
      `SELECT * FROM checkpoints WHERE tenant = @tenant AND tool_use_key = @key AND model_identity = @model
       AND reason IN (${SESSION_REASON_LIST}) ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    ),
    bySession: db.prepare<{ tenant: string; model: string; session: string }, CheckpointRow>(
      `SELECT * FROM checkpoints WHERE tenant = @tenant AND session_id = @session AND model_identity = @model
       AND reason IN (${SESSION_REASON_LIST}) ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    ),
    evictionOrder: db.prepare<[string], { id: string; bytes: number }>(evictionOrderSql("all")),
    // What local rows wrote, plus each chunk they link whose writer is no longer a local row (once).
    totalBytes: db
      .prepare<[], number>(
        `SELECT (SELECT COALESCE(SUM(bytes), 0) FROM checkpoints WHERE local = 1)
         + (SELECT COALESCE(SUM(b), 0) FROM (
             SELECT json_extract(j.value, '$.id') AS cid, MAX(json_extract(j.value, '$.bytes')) AS b
             FROM checkpoints c, json_each(c.chain) j WHERE c.local = 1 GROUP BY cid)
           WHERE cid NOT IN (SELECT id FROM checkpoints WHERE local = 1))`,
      )
      .pluck(),
    // Rows (local or a replica's) other than `id` whose chain links chunk `chunk`.
    linkedBy: db
      .prepare<[string, string], number>(
        `SELECT COUNT(*) FROM checkpoints c, json_each(c.chain) j
         WHERE c.id != ? AND json_extract(j.value, '$.id') = ?`,
      )
      .pluck(),
    byReason: db.prepare<[], { reason: string; n: number }>(
      "SELECT reason, COUNT(*) AS n FROM checkpoints GROUP BY reason",
    ),
  };
}
