import { ok as assert } from "node:assert";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { log } from "../../log.ts";
import { CheckpointReplication } from "../replica/checkpoint-replication.ts";
import { ChunkedState, defaultScratchDir } from "../state/chunked-state.ts";
import type { TenantDataKey } from "../state/sealed-file.ts";
import { keyedPrefixHashes, keyedTextHash, textHashKey } from "../state/text-hash.ts";
import { CheckpointBudget } from "./budget/checkpoint-budget.ts";
import type { EvictionReason } from "./budget/checkpoint-tenant-share.ts";
import { CheckpointChains } from "./checkpoint-chains.ts";
import { CheckpointFiles } from "./checkpoint-files.ts";
import { CheckpointIndex, toolUseKey } from "./checkpoint-index.ts";
import { CheckpointPins } from "./checkpoint-pins.ts";
import type { CheckpointStorage } from "./checkpoint-storage.ts";
import { PlainStateCache } from "./plain-state-cache.ts";
import type { CheckpointStoreOptions } from "./store-options.ts";
import {
  CheckpointKeyError,
  type CheckpointMeta,
  CheckpointMismatchError,
  type CheckpointPayload,
  type CheckpointStats,
  type CheckpointWriteInput,
  CorruptCheckpointError,
  SESSION_REASONS,
} from "./types.ts";

/** Files without an index row younger than this may be another worker's write in progress. */
const ORPHAN_GRACE_MS = 10 * 60_000;

/** Plain states kept in scratch memory for restores, unless the options say otherwise. */
const DEFAULT_PLAIN_CACHE = 1024 * 1024 * 1024;

/**
 * KV checkpoints on local disk: one state file and one payload file per checkpoint, named by a random
 * id, and a SQLite index that is the commit point. Lookups never scan the directory; loads pin their
 * entry so eviction and replacement never delete a file being loaded.
 * Several worker processes on one host may open the same directory (a shared checkpoint location):
 * the index is one SQLite database in WAL mode with a busy timeout and immediate write transactions,
 * so any worker finds any worker's checkpoints. A checkpoint another process evicts while this one
 * loads it fails its read and is served by prefill, never used half-written.
 */
export class CheckpointStore implements CheckpointStorage {
  readonly #index: CheckpointIndex;
  readonly #files: CheckpointFiles;
  readonly #budget: CheckpointBudget;
  readonly #modelIdentity: string;
  readonly #now: () => number;
  readonly #maxPrefixCandidates: number;
  readonly #shared: boolean;
  readonly #pins = new CheckpointPins();
  readonly #replica: CheckpointReplication | undefined;
  readonly #chains: CheckpointChains;
  #hits = 0;
  #misses = 0;

  private constructor(
    index: CheckpointIndex,
    files: CheckpointFiles,
    scratch: ChunkedState,
    options: CheckpointStoreOptions,
  ) {
    this.#index = index;
    this.#files = files;
    this.#modelIdentity = options.modelIdentity;
    this.#now = options.now ?? Date.now;
    this.#maxPrefixCandidates = options.maxPrefixCandidates ?? 64;
    this.#shared = options.shared ?? false;
    this.#chains = new CheckpointChains(index, files, this.#pins, scratch, this.#modelIdentity);
    this.#replica =
      options.replica && new CheckpointReplication(options.replica, index, files, this.#pins, this.#modelIdentity);
    this.#budget = new CheckpointBudget({
      index,
      pins: this.#pins,
      modelIdentity: this.#modelIdentity,
      dir: options.dir,
      budgetBytes: options.budgetBytes,
      tenantShareBytes: options.tenantShareBytes,
      availableBytes: options.availableBytes,
      evictLocal: (id) => this.#evictLocal(id),
    });
  }

  /**
   * Open (create) the store in `options.dir`. Reconciles once: index rows whose files are missing are
   * dropped; files (and `*.tmp` leftovers) without a row are deleted; then evicts to the budget.
   */
  static open(options: CheckpointStoreOptions): CheckpointStore {
    assert(options.budgetBytes >= 0 && options.modelIdentity !== "", "a checkpoint store needs a budget and a model");
    mkdirSync(options.dir, { recursive: true });
    const scratchDir = options.scratchDir ?? defaultScratchDir();
    const scratch = new ChunkedState(scratchDir);
    const plainCache = PlainStateCache.inMemory(scratchDir)
      ? new PlainStateCache(
          join(dirname(scratch.scratchPath()), "plain"),
          options.plainCacheBytes ?? DEFAULT_PLAIN_CACHE,
        )
      : undefined;
    const files = new CheckpointFiles(join(options.dir, "files"), () => scratch.scratchPath(), plainCache);
    const index = new CheckpointIndex(join(options.dir, "index.sqlite"));
    const store = new CheckpointStore(index, files, scratch, options);
    store.#reconcile();
    store.evictToBudget();
    return store;
  }

  /** The model identity this store returns checkpoints for. */
  get modelIdentity(): string {
    return this.#modelIdentity;
  }

  /**
   * Write a checkpoint atomically. `writeState(tempPath)` writes the KV state file; the store writes
   * the payload, fsyncs and renames both, records their checksum, then commits the index row (a crash
   * before that leaves orphans, removed at the next open). A session-scoped reason (`tool-frontier`,
   * `parked`, `shutdown`) with a non-empty `sessionId` replaces that session's older checkpoint of the
   * same reason. Finally evicts to the budget, never the new entry nor a pinned one.
   */
  async write(input: CheckpointWriteInput, writeState: (tempPath: string) => Promise<void>): Promise<CheckpointMeta> {
    assert(input.tenant !== "" && input.key.tenant === input.tenant, "a checkpoint needs its tenant's data key");
    const id = randomBytes(16).toString("hex");
    const { text, tokens } = input.payload;
    const textHash = keyedTextHash(textHashKey(input.key), text);
    const writeChained = () => this.#chains.write(id, input, writeState);
    let result: Awaited<ReturnType<typeof writeChained>>;
    try {
      result = await writeChained();
    } catch (error) {
      // A full disk: reclaim space from the least valuable checkpoints and try once more.
      if (!this.#budget.reclaimAfter(error)) throw error;
      result = await writeChained();
    }
    const { written, chain } = result;
    const now = this.#now();
    const meta: CheckpointMeta = {
      id,
      tenant: input.tenant,
      sessionId: input.sessionId,
      reason: input.reason,
      textHash,
      textLength: text.length,
      tokenCount: tokens.length,
      toolUseIds: [...input.toolUseIds],
      bytes: written.bytes,
      chain,
      modelIdentity: this.#modelIdentity,
      createdAt: now,
      lastUsedAt: now,
      hits: 0,
    };
    const replace = input.sessionId !== "" && SESSION_REASONS.includes(input.reason);
    let replaced: CheckpointMeta[];
    try {
      replaced = this.#index.insert(meta, written.checksum, replace);
    } catch (error) {
      this.#files.remove(id);
      throw error;
    }
    for (const old of replaced) {
      this.#deleteFiles(old.id);
      this.#dropRemote(old);
    }
    this.#budget.written(input.tenant, input.sessionId);
    this.#budget.evict(id);
    // Before the write resolves: a session handed over or parked is readable from other hosts.
    await this.#replica?.upload(meta, written.checksum);
    return meta;
  }

  /**
   * The longest checkpoint of `key.tenant` (this model) whose covered text is a prefix of `text`:
   * tries the longest distinct stored lengths (at most `maxPrefixCandidates`), comparing keyed
   * hashes of `text.slice(0, length)` under `key` (another tenant's or a rotated key matches
   * nothing). Pass `prefixOf: text` to {@link load} to verify the bytes before use. Counts a hit or
   * a miss. `minTokens` (default 1) skips checkpoints holding fewer tokens.
   */
  findLongestPrefix(
    key: TenantDataKey,
    text: string,
    options: { minTokens?: number } = {},
  ): CheckpointMeta | undefined {
    const minTokens = options.minTokens ?? 1;
    const model = this.#modelIdentity;
    const tenant = key.tenant;
    const lengths = this.#index.prefixLengths(tenant, model, text.length, minTokens, this.#maxPrefixCandidates);
    const hashes = keyedPrefixHashes(textHashKey(key), text, lengths);
    for (const length of lengths) {
      const hash = hashes.get(length);
      const meta = hash === undefined ? undefined : this.#index.findByPrefix(tenant, model, length, hash, minTokens);
      if (meta) {
        this.#hits++;
        return meta;
      }
    }
    this.#misses++;
    return undefined;
  }

  /** The newest tool-frontier, parked or shutdown checkpoint of `tenant` keyed by exactly the set `ids`. */
  findByToolUseIds(tenant: string, ids: readonly string[]): CheckpointMeta | undefined {
    if (ids.length === 0) return undefined;
    return this.#index.findByToolUseKey(tenant, this.#modelIdentity, toolUseKey(ids));
  }

  evictedSession(tenant: string, sessionId: string): EvictionReason | undefined {
    return this.#budget.evictedSession(tenant, sessionId);
  }

  /** The newest tool-frontier, parked or shutdown checkpoint of this session. */
  findBySession(tenant: string, sessionId: string): CheckpointMeta | undefined {
    if (sessionId === "") return undefined;
    return this.#index.findBySession(tenant, this.#modelIdentity, sessionId);
  }

  /**
   * Load a checkpoint found by a `find*` call. Pins it (eviction and replacement leave its files alone)
   * until done, opens and parses the payload, then opens the sealed state (each chunk of a chain)
   * into plain scratch memory and `readState(plainPath, payload)`s it: every GCM tag is checked
   * before the engine reads a byte, so a state that does not open is never loaded. Files fetched from
   * the replica are opened the same way. Then records the use and returns the payload. A missing
   * entry or file, a failed tag or an unreadable payload removes the entry and throws
   * {@link CorruptCheckpointError}; a `key` that does not open it throws {@link CheckpointKeyError}
   * and keeps it (a wrong key is a miss, not damage). With `prefixOf`, a stored text that is not a
   * prefix of it throws {@link CheckpointMismatchError} (the entry is kept) before the state is read.
   */
  async load(
    meta: CheckpointMeta,
    key: TenantDataKey,
    readState: (statePath: string, payload: CheckpointPayload) => Promise<void>,
    options: { prefixOf?: string } = {},
  ): Promise<CheckpointPayload> {
    assert(meta.tenant === key.tenant, "checkpoint belongs to another tenant");
    const { id } = meta;
    this.#pins.pin(id);
    try {
      const { payload } = await this.#readPayload(id, key);
      if (options.prefixOf !== undefined && !options.prefixOf.startsWith(payload.text)) {
        throw new CheckpointMismatchError(id);
      }
      await this.#chains
        .load(meta, key, (path) => readState(path, payload))
        .catch((error: unknown) => this.#corrupt(id, error));
      this.#index.touch(id, this.#now());
      return payload;
    } finally {
      if (this.#pins.unpin(id)) this.#files.remove(id);
    }
  }

  /**
   * The payload of a checkpoint whose files are on local disk (a candidate for `extends`), opened
   * with `key`; undefined when it is not local or does not open. A damaged one is removed.
   */
  async localPayload(meta: CheckpointMeta, key: TenantDataKey): Promise<CheckpointPayload | undefined> {
    const row = this.#index.get(meta.id);
    if (!row?.local || row.meta.tenant !== key.tenant) return undefined;
    this.#pins.pin(meta.id);
    try {
      return (await this.#readPayload(meta.id, key)).payload;
    } catch (error) {
      if (error instanceof CorruptCheckpointError || error instanceof CheckpointKeyError) return undefined;
      throw error;
    } finally {
      if (this.#pins.unpin(meta.id)) this.#files.remove(meta.id);
    }
  }

  /**
   * Remove a checkpoint (row now, files now or when its last load ends, the replica's copy in the
   * background). False when it was not stored.
   */
  remove(id: string): boolean {
    const row = this.#replica ? this.#index.get(id) : undefined;
    const existed = this.#index.delete(id);
    this.#deleteFiles(id);
    if (row) this.#dropRemote(row.meta);
    return existed;
  }

  /**
   * Delete the replica's copy of a checkpoint whose row is gone. Chunks are stored once remotely too
   * (under the id of the checkpoint that wrote them): its own state chunk stays while a row this
   * store knows (local or imported) still links it, and each chunk it linked goes once nothing known
   * links it any more. A dependent on another host this store never imported may then miss a chunk:
   * its load fails as missing and the turn falls back to prefill.
   */
  #dropRemote(meta: CheckpointMeta): void {
    if (!this.#replica) return;
    const { keepState, orphans } = this.#chains.remoteDeletion(meta);
    this.#replica.deleteRemote(meta, keepState, orphans);
  }

  /**
   * Import the replica's metadata of `tenant`'s shared-prefix checkpoints and (with `sessionId`) that
   * session's, as rows without files (this model only); drop replica-only rows of those scopes that
   * are gone remotely. Returns how many rows were imported (0 without a replica).
   */
  async refresh(tenant: string, sessionId?: string): Promise<number> {
    return (await this.#replica?.refresh(tenant, sessionId)) ?? 0;
  }

  /**
   * Evict until the total size is within the budget, least valuable first: other models' entries, then
   * by reason weight (tool-frontier 4 > parked = shutdown 3 > cold-anchor 2 > periodic 1; a checkpoint
   * others chain on is worth what they are, eviction-order.ts), then least recently used. Pinned
   * entries are skipped.
   */
  evictToBudget(): void {
    this.#budget.evict(undefined);
  }

  /** Counts, bytes and lookup hits/misses since open. */
  stats(): CheckpointStats {
    const byReason = this.#index.countsByReason();
    const count = Object.values(byReason).reduce((a, b) => a + b, 0);
    const bytes = this.#index.totalBytes();
    const { budgetBytes, evictions } = this.#budget;
    return { count, bytes, budgetBytes, hits: this.#hits, misses: this.#misses, byReason, evictions };
  }

  /** Close the index. Call after in-flight writes and loads have settled. */
  close(): void {
    this.#index.close();
    this.#chains.close();
  }

  async #readPayload(id: string, key: TenantDataKey): Promise<{ payload: CheckpointPayload }> {
    try {
      const row = this.#index.get(id);
      if (!row) {
        throw new CorruptCheckpointError(`checkpoint ${id} is no longer stored`, { checkpointId: id, kind: "missing" });
      }
      assert(
        row.meta.tenant === key.tenant && row.meta.modelIdentity === this.#modelIdentity,
        "checkpoint not loadable",
      );
      if (!row.local) await this.#download(row.meta);
      const payload = await this.#files.readPayload(id, row.checksum, key);
      const textHash = keyedTextHash(textHashKey(key), payload.text);
      if (payload.text.length !== row.meta.textLength || textHash !== row.meta.textHash) {
        throw new CorruptCheckpointError(`checkpoint ${id}: payload text does not match its index row`, {
          checkpointId: id,
          kind: "payload",
        });
      }
      return { payload };
    } catch (error) {
      this.#corrupt(id, error);
    }
  }

  /** Rethrow `error`; a {@link CorruptCheckpointError} first removes the entry. */
  #corrupt(id: string, error: unknown): never {
    if (error instanceof CorruptCheckpointError) {
      this.remove(id);
      log("checkpoint corrupt, removed", { id, kind: error.kind });
    }
    throw error;
  }

  /** Eviction frees local disk: with a replica the row stays (files are fetched again on use). */
  #evictLocal(id: string): void {
    if (!this.#replica) {
      this.remove(id);
      return;
    }
    this.#index.setLocal(id, false);
    this.#deleteFiles(id);
  }

  /** Fetch a replica-only checkpoint's files; verified by the caller. */
  async #download(meta: CheckpointMeta): Promise<void> {
    if (!this.#replica) {
      throw new CorruptCheckpointError(`checkpoint ${meta.id} has no files`, {
        checkpointId: meta.id,
        kind: "missing",
      });
    }
    await this.#replica.download(meta, () => this.#budget.evict(meta.id));
  }

  #reconcile(): void {
    const known = new Set(this.#index.ids());
    const present = this.#files.reconcile(known, this.#shared ? ORPHAN_GRACE_MS : 0);
    let dropped = 0;
    for (const id of this.#index.localIds()) {
      if (present.has(id)) continue;
      if (this.#replica) this.#index.setLocal(id, false);
      else this.remove(id);
      dropped++;
    }
    if (dropped > 0) log("checkpoint rows without files dropped", { count: dropped });
  }

  #deleteFiles(id: string): void {
    if (!this.#pins.deferIfPinned(id)) this.#files.remove(id);
  }
}
