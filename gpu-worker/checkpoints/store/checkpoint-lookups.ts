/**
 * How the checkpoint store finds a checkpoint (by text prefix under the tenant's key, by tool-use
 * IDs, by session) and reads its payload back verified against its index row. CheckpointStore
 * (checkpoint-store.ts) pins, loads and removes what these find.
 */
import { ok as assert } from "node:assert";
import type { TenantDataKey } from "../state/sealed-file.ts";
import { keyedPrefixHashes, keyedTextHash, textHashKey } from "../state/text-hash.ts";
import type { CheckpointFiles } from "./checkpoint-files.ts";
import { type CheckpointIndex, toolUseKey } from "./checkpoint-index.ts";
import { type CheckpointMeta, type CheckpointPayload, CorruptCheckpointError } from "./types.ts";

export class CheckpointLookups {
  #hits = 0;
  #misses = 0;

  constructor(
    readonly index: CheckpointIndex,
    readonly modelIdentity: string,
    readonly maxPrefixCandidates: number,
  ) {}

  /** Prefix lookups that found a checkpoint since open. */
  get hits(): number {
    return this.#hits;
  }

  /** Prefix lookups that found none since open. */
  get misses(): number {
    return this.#misses;
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
    const model = this.modelIdentity;
    const tenant = key.tenant;
    const lengths = this.index.prefixLengths(tenant, model, text.length, minTokens, this.maxPrefixCandidates);
    const hashes = keyedPrefixHashes(textHashKey(key), text, lengths);
    for (const length of lengths) {
      const hash = hashes.get(length);
      const meta = hash === undefined ? undefined : this.index.findByPrefix(tenant, model, length, hash, minTokens);
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
    return this.index.findByToolUseKey(tenant, this.modelIdentity, toolUseKey(ids));
  }

  /** The newest tool-frontier, parked or shutdown checkpoint of this session. */
  findBySession(tenant: string, sessionId: string): CheckpointMeta | undefined {
    if (sessionId === "") return undefined;
    return this.index.findBySession(tenant, this.modelIdentity, sessionId);
  }

  /**
   * Read checkpoint `id`'s payload with `key`, fetching a replica-only one first, and check it against
   * its index row (length and keyed hash of the text). A missing row or a payload that does not match
   * throws {@link CorruptCheckpointError}.
   */
  async readVerifiedPayload(
    files: CheckpointFiles,
    id: string,
    key: TenantDataKey,
    download: (meta: CheckpointMeta) => Promise<void>,
  ): Promise<CheckpointPayload> {
    const row = this.index.get(id);
    if (!row) {
      throw new CorruptCheckpointError(`checkpoint ${id} is no longer stored`, { checkpointId: id, kind: "missing" });
    }
    assert(row.meta.tenant === key.tenant && row.meta.modelIdentity === this.modelIdentity, "checkpoint not loadable");
    if (!row.local) await download(row.meta);
    const payload = await files.readPayload(id, row.checksum, key);
    const textHash = keyedTextHash(textHashKey(key), payload.text);
    if (payload.text.length !== row.meta.textLength || textHash !== row.meta.textHash) {
      throw new CorruptCheckpointError(`checkpoint ${id}: payload text does not match its index row`, {
        checkpointId: id,
        kind: "payload",
      });
    }
    return payload;
  }
}
