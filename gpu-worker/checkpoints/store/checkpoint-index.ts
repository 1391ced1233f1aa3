import Database from "better-sqlite3";
import { TenantShareQueries } from "./budget/checkpoint-tenant-share.ts";
import { type CheckpointRow, prepareStatements, SCHEMA, SCHEMA_VERSION } from "./checkpoint-schema.ts";
import {
  CHECKPOINT_REASONS,
  type ChainLink,
  type CheckpointMeta,
  type CheckpointReason,
  isCheckpointReason,
} from "./types.ts";

/** An index row: the meta plus the checksum over its two files. */
export interface IndexedCheckpoint {
  readonly meta: CheckpointMeta;
  readonly checksum: string;
  /** Its files are in this directory (false: a replica's checkpoint, fetched on first load). */
  readonly local: boolean;
}

/** The set key of tool-use IDs: sorted, deduplicated, JSON-encoded ("[]" for none). */
export function toolUseKey(ids: readonly string[]): string {
  return JSON.stringify([...new Set(ids)].sort());
}

/** The SQLite index of a checkpoint store: one row per checkpoint, prepared statements only. */
export class CheckpointIndex {
  readonly #db: Database.Database;
  readonly #statements: ReturnType<typeof prepareStatements>;
  /** Per-tenant shares of the budget (checkpoint-tenant-share.ts). */
  readonly tenantShares: TenantShareQueries;
  readonly #commit: Database.Transaction<(row: CheckpointRow, replace: boolean) => CheckpointMeta[]>;

  /** Open (create) the index database at `path`. */
  constructor(path: string) {
    // Several worker processes may share the index: wait for each other's write locks.
    const db = new Database(path, { timeout: 10_000 });
    this.#db = db;
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    if (db.pragma("user_version", { simple: true }) !== SCHEMA_VERSION) dropOldSchema(db);
    db.exec(SCHEMA);
    this.#statements = prepareStatements(db);
    this.tenantShares = new TenantShareQueries(db);
    this.#commit = db.transaction((row: CheckpointRow, replace: boolean): CheckpointMeta[] => {
      const ids = replace ? this.#statements.sameSession.all(row.tenant, row.session_id, row.reason) : [];
      const replaced: CheckpointMeta[] = [];
      for (const id of ids) {
        const old = this.#statements.get.get(id);
        if (old) replaced.push(toMeta(old));
        this.#statements.delete.run(id);
      }
      this.#statements.insert.run(row);
      return replaced;
    });
  }

  /**
   * Commit a checkpoint's row. With `replace`, first delete the rows of the same (tenant, session,
   * reason), in the same transaction; returns their metas so their files can be deleted.
   */
  insert(meta: CheckpointMeta, checksum: string, replace: boolean): CheckpointMeta[] {
    // Immediate: take the write lock before reading the rows to replace (another process may write).
    return this.#commit.immediate(toRow(meta, checksum, true), replace);
  }

  /** Record a replica's checkpoint (no local files yet); false when the id is already indexed. */
  insertRemote(meta: CheckpointMeta, checksum: string): boolean {
    return this.#statements.insertRemote.run(toRow(meta, checksum, false)).changes > 0;
  }

  /** Mark whether the files of `id` are in this directory. */
  setLocal(id: string, local: boolean): void {
    this.#statements.setLocal.run(local ? 1 : 0, id);
  }

  /** Ids whose files should be in this directory. */
  localIds(): string[] {
    return this.#statements.localIds.all();
  }

  /** Ids of a tenant's replica-only rows: shared prefixes and the session's. */
  remoteIdsIn(tenant: string, sessionId: string): string[] {
    return this.#statements.remoteIdsIn.all(tenant, sessionId);
  }

  /** The row of `id`, if present. */
  get(id: string): IndexedCheckpoint | undefined {
    const row = this.#statements.get.get(id);
    return row && { meta: toMeta(row), checksum: row.checksum, local: row.local === 1 };
  }

  /** Every id in the index. */
  ids(): string[] {
    return this.#statements.ids.all();
  }

  /** Delete the row of `id`; false when there was none. */
  delete(id: string): boolean {
    return this.#statements.delete.run(id).changes > 0;
  }

  /** Record a successful load. */
  touch(id: string, now: number): void {
    this.#statements.touch.run(now, id);
  }

  /** Distinct covered-text lengths of a tenant's checkpoints (one model), longest first. */
  prefixLengths(tenant: string, model: string, maxLength: number, minTokens: number, limit: number): number[] {
    return this.#statements.prefixLengths.all({ tenant, model, maxLength, minTokens, limit });
  }

  /** Newest checkpoint of a tenant (one model) covering a text of this length and hash. */
  findByPrefix(
    tenant: string,
    model: string,
    length: number,
    hash: string,
    minTokens: number,
  ): CheckpointMeta | undefined {
    const row = this.#statements.byPrefix.get({ tenant, model, length, hash, minTokens });
    return row && toMeta(row);
  }

  /** Newest session-reason checkpoint of a tenant (one model) keyed by exactly this ID set. */
  findByToolUseKey(tenant: string, model: string, key: string): CheckpointMeta | undefined {
    const row = this.#statements.byToolUseKey.get({ tenant, model, key });
    return row && toMeta(row);
  }

  /** Newest session-reason checkpoint of a session (one model). */
  findBySession(tenant: string, model: string, session: string): CheckpointMeta | undefined {
    const row = this.#statements.bySession.get({ tenant, model, session });
    return row && toMeta(row);
  }

  /** All rows, least valuable first: other models, then by reason weight, then least recently used. */
  evictionOrder(model: string): { id: string; bytes: number }[] {
    return this.#statements.evictionOrder.all(model);
  }

  /** Disk bytes of local rows: what each wrote, plus linked chunks whose writer is gone (once each). */
  totalBytes(): number {
    return this.#statements.totalBytes.get() ?? 0;
  }

  /** How many rows (local or a replica's) other than `exceptId` link chunk `chunkId` in their chain. */
  linkedBy(chunkId: string, exceptId: string): number {
    return this.#statements.linkedBy.get(exceptId, chunkId) ?? 0;
  }

  /** Row count per reason (all models). */
  countsByReason(): Record<CheckpointReason, number> {
    const counts = Object.fromEntries(CHECKPOINT_REASONS.map((r) => [r, 0])) as Record<CheckpointReason, number>;
    for (const { reason, n } of this.#statements.byReason.all()) if (isCheckpointReason(reason)) counts[reason] = n;
    return counts;
  }

  /** Close the database. */
  close(): void {
    this.#db.close();
  }
}

/**
 * Drop an index of another schema version (its files become orphans, deleted by the store's
 * reconcile). Older versions keyed rows by a plain SHA-256 of the text: the file is vacuumed and the
 * WAL truncated so no page of it keeps one.
 */
function dropOldSchema(db: Database.Database): void {
  const hadTable = db.prepare("SELECT name FROM sqlite_master WHERE name = 'checkpoints'").get() !== undefined;
  db.exec("DROP TABLE IF EXISTS checkpoints");
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
  if (!hadTable) return;
  db.exec("VACUUM");
  db.pragma("wal_checkpoint(TRUNCATE)");
}

function toRow(meta: CheckpointMeta, checksum: string, local: boolean): CheckpointRow {
  return {
    id: meta.id,
    tenant: meta.tenant,
    session_id: meta.sessionId,
    reason: meta.reason,
    text_hash: meta.textHash,
    text_length: meta.textLength,
    token_count: meta.tokenCount,
    tool_use_ids: JSON.stringify(meta.toolUseIds),
    tool_use_key: toolUseKey(meta.toolUseIds),
    bytes: meta.bytes,
    checksum,
    model_identity: meta.modelIdentity,
    created_at: meta.createdAt,
    last_used_at: meta.lastUsedAt,
    hits: meta.hits,
    local: local ? 1 : 0,
    chain: JSON.stringify(meta.chain),
  };
}

function toMeta(row: CheckpointRow): CheckpointMeta {
  if (!isCheckpointReason(row.reason)) throw new Error(`checkpoint index: unknown reason ${row.reason}`);
  return {
    id: row.id,
    tenant: row.tenant,
    sessionId: row.session_id,
    reason: row.reason,
    textHash: row.text_hash,
    textLength: row.text_length,
    tokenCount: row.token_count,
    toolUseIds: JSON.parse(row.tool_use_ids) as string[],
    bytes: row.bytes,
    modelIdentity: row.model_identity,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    hits: row.hits,
    chain: parseChain(row.chain),
  };
}

/** The chain of an index row or a replica's metadata; throws on anything malformed. */
export function parseChain(value: unknown): ChainLink[] {
  const links = typeof value === "string" ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(links)) throw new Error("checkpoint chain is not a list");
  return links.map((link: unknown) => {
    const { id, crc, bytes } = (link ?? {}) as Record<string, unknown>;
    if (typeof id !== "string" || !/^[0-9a-f]{32}$/.test(id)) throw new Error("checkpoint chain: bad id");
    if (!Number.isSafeInteger(crc) || !Number.isSafeInteger(bytes)) throw new Error("checkpoint chain: bad size");
    return { id, crc: crc as number, bytes: bytes as number };
  });
}
