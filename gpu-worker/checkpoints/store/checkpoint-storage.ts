/**
 * The storage interface the worker uses for KV checkpoints. One implementation: `CheckpointStore`
 * (files + a SQLite index in one directory, which several worker processes on a host may share),
 * optionally replicated to an S3-compatible bucket (`S3CheckpointReplica`) so that workers on other
 * hosts find and load its checkpoints: lookups stay synchronous over the local index, `refresh`
 * pulls the bucket's metadata into it, and `load` downloads the files on first use.
 */
import type { TenantDataKey } from "../state/sealed-file.ts";
import type { EvictionReason } from "./budget/checkpoint-tenant-share.ts";
import type { CheckpointMeta, CheckpointPayload, CheckpointStats, CheckpointWriteInput } from "./types.ts";

export interface CheckpointStorage {
  /** The model identity whose checkpoints this store returns. */
  readonly modelIdentity: string;
  /**
   * Write atomically; `writeState(path)` writes the engine's KV state file (with `input.extends`,
   * into scratch memory: only the cells past that checkpoint's tokens reach the disk, as a chunk).
   */
  write(input: CheckpointWriteInput, writeState: (tempPath: string) => Promise<void>): Promise<CheckpointMeta>;
  /**
   * The longest checkpoint of `key.tenant` whose covered text is a prefix of `text`. Rows are keyed
   * by a hash under the tenant's data key (`../state/text-hash.ts`): another key finds nothing.
   */
  findLongestPrefix(key: TenantDataKey, text: string, options?: { minTokens?: number }): CheckpointMeta | undefined;
  /** The newest session checkpoint keyed by exactly this tool-use ID set. */
  findByToolUseIds(tenant: string, ids: readonly string[]): CheckpointMeta | undefined;
  /** The newest tool-frontier, parked or shutdown checkpoint of a session. */
  findBySession(tenant: string, sessionId: string): CheckpointMeta | undefined;
  /** Why this session's checkpoint was evicted, when it was and none has been written since (a miss reason). */
  evictedSession?(tenant: string, sessionId: string): EvictionReason | undefined;
  /**
   * Open with the owner's data key and load: `readState(plainPath, payload)` reads the KV state from
   * a plain file in scratch memory (every tag checked before). A key that does not open it throws
   * `CheckpointKeyError` and keeps the checkpoint.
   */
  load(
    meta: CheckpointMeta,
    key: TenantDataKey,
    readState: (statePath: string, payload: CheckpointPayload) => Promise<void>,
    options?: { prefixOf?: string },
  ): Promise<CheckpointPayload>;
  /** The payload of a checkpoint stored on local disk, opened with `key`, else undefined. */
  localPayload(meta: CheckpointMeta, key: TenantDataKey): Promise<CheckpointPayload | undefined>;
  remove(id: string): boolean;
  /** The checkpoint `id` is in this store's index (not evicted, not replaced). */
  has(id: string): boolean;
  /**
   * Pull remote metadata (with a replica) of `tenant`'s shared-prefix checkpoints and, with
   * `sessionId`, that session's into the local index; resolves to the rows imported (0 without one).
   */
  refresh(tenant: string, sessionId?: string): Promise<number>;
  stats(): CheckpointStats;
  close(): void;
}
