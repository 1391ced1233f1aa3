import type { TenantDataKey } from "../state/sealed-file.ts";

/** Why a checkpoint was written; also its eviction value (see {@link REASON_WEIGHT}). */
export type CheckpointReason = "cold-anchor" | "tool-frontier" | "periodic" | "parked" | "shutdown";

/** Every reason, in a fixed order (for stats and exhaustive tables). */
export const CHECKPOINT_REASONS: readonly CheckpointReason[] = [
  "cold-anchor",
  "tool-frontier",
  "periodic",
  "parked",
  "shutdown",
];

/**
 * Eviction value by reason: higher survives longer. A tool-frontier checkpoint (a turn that ended
 * in `tool_use`, keyed by its IDs) is the one a moved session most likely needs next.
 */
export const REASON_WEIGHT: Readonly<Record<CheckpointReason, number>> = {
  "tool-frontier": 4,
  parked: 3,
  shutdown: 3,
  "cold-anchor": 2,
  periodic: 1,
};

/** Reasons kept once per session: a newer one replaces the older (same tenant, session, reason). */
export const SESSION_REASONS: readonly CheckpointReason[] = ["tool-frontier", "parked", "shutdown"];

/** The index row of one stored checkpoint. */
export interface CheckpointMeta {
  /** Random and unguessable (16 random bytes, hex); also the file name stem. */
  readonly id: string;
  /** Owner; every lookup is scoped to it. */
  readonly tenant: string;
  /** The session it belongs to; "" for shared prefixes such as a cold anchor. */
  readonly sessionId: string;
  readonly reason: CheckpointReason;
  /**
   * Keyed hash (hex) of the covered text: HMAC-SHA-256 under a key derived from the tenant's data
   * key (`keyedTextHash`); never a plain hash of the text.
   */
  readonly textHash: string;
  /** UTF-16 length of the covered text. */
  readonly textLength: number;
  /** Tokens held by the KV state. */
  readonly tokenCount: number;
  /** For a tool-frontier checkpoint: the tool-use IDs it is keyed by (may be empty). */
  readonly toolUseIds: readonly string[];
  /**
   * What this checkpoint wrote: its own state chunk plus its payload (for one that extends another,
   * see `CheckpointWriteInput.extends`, the chunk holds only the cells it added).
   */
  readonly bytes: number;
  /**
   * The earlier state chunks this checkpoint's KV is assembled from, oldest first (empty: its own
   * state file holds every cell). Each names the checkpoint that wrote it; the store keeps a hard
   * link to each, so removing that writer never frees a chunk this one still needs.
   */
  readonly chain: readonly ChainLink[];
  /** The model the KV belongs to; entries of another model are never returned. */
  readonly modelIdentity: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** Epoch milliseconds of the last successful load (or of the write). */
  readonly lastUsedAt: number;
  /** Successful loads. */
  readonly hits: number;
}

/**
 * What is stored beside the KV state: the exact covered text, its tokens, and opaque extra JSON
 * (the worker's frontier and exact turn memory). `extra` must survive `JSON.stringify`.
 */
export interface CheckpointPayload {
  /** The exact text the KV state covers (a prefix of a later request when reused). */
  readonly text: string;
  /** The tokens the checkpoint restores, in order. */
  readonly tokens: readonly number[];
  /** Opaque JSON the worker restores with the state (frontier, exact turn memory). */
  readonly extra: unknown;
}

/** One earlier state chunk of a checkpoint: the checkpoint that wrote it, its CRC-32 and size. */
export interface ChainLink {
  readonly id: string;
  readonly crc: number;
  readonly bytes: number;
}

/** What a caller supplies to `CheckpointStore.write`; the rest of the meta is derived. */
export interface CheckpointWriteInput {
  /** Owner (non-empty). */
  readonly tenant: string;
  /** The owner's data key (from the request): the state and payload are sealed under it. */
  readonly key: TenantDataKey;
  /** The session, or "" for a shared prefix (never replaced by another write). */
  readonly sessionId: string;
  /** Why it is written; decides replacement and eviction value. */
  readonly reason: CheckpointReason;
  /** The frontier's tool-use IDs for `findByToolUseIds` (order and duplicates do not matter). */
  readonly toolUseIds: readonly string[];
  /** Text, tokens and extra JSON stored beside the KV state. */
  readonly payload: CheckpointPayload;
  /**
   * Write only the KV cells this checkpoint adds to checkpoint `extends` (same tenant and model,
   * stored locally, its tokens a prefix of `payload.tokens`): `writeState` dumps the whole state to
   * a scratch file in memory, the store keeps the cells at positions past the base's tokens (a
   * chunk) and links the base's chunks. Falls back to storing the whole state when the base is
   * gone, its chain is at the limit, or the state's layout is not one the chunker knows.
   */
  readonly extends?: string;
}

/** Counters reported by `CheckpointStore.stats`. */
export interface CheckpointStats {
  /** Stored checkpoints (all models). */
  readonly count: number;
  /** Their total size on disk. */
  readonly bytes: number;
  /** The disk budget the store evicts down to. */
  readonly budgetBytes: number;
  /** `findLongestPrefix` calls that found a checkpoint, since open. */
  readonly hits: number;
  /** `findLongestPrefix` calls that found none, since open. */
  readonly misses: number;
  /** Stored checkpoints per reason. */
  readonly byReason: Record<CheckpointReason, number>;
  /** Checkpoints the budget evicted since open, by why (checkpoint-tenant-share.ts's EvictionReason). */
  readonly evictions?: Readonly<Record<string, number>>;
}

/** Why a checkpoint is unusable: files or row gone, checksum mismatch, unreadable payload, or other. */
export type CorruptionKind = "missing" | "checksum" | "payload" | "other";

/** A checkpoint that cannot be used (the store has removed it); fall back to prefill. */
export class CorruptCheckpointError extends Error {
  override readonly name = "CorruptCheckpointError";
  /** The unusable checkpoint ("" when the caller raised it without one). */
  readonly checkpointId: string;
  /** What was wrong with it. */
  readonly kind: CorruptionKind;

  constructor(message: string, detail: { checkpointId?: string; kind?: CorruptionKind } = {}) {
    super(message);
    this.checkpointId = detail.checkpointId ?? "";
    this.kind = detail.kind ?? "other";
  }
}

/**
 * The caller's data key does not open the checkpoint (another tenant's or deployment's key, a
 * rotated key, an altered header). The checkpoint is kept: a wrong key is a miss, never a deletion.
 */
export class CheckpointKeyError extends Error {
  override readonly name = "CheckpointKeyError";
  constructor(readonly checkpointId: string) {
    super(`checkpoint ${checkpointId} does not open with this data key`);
  }
}

/**
 * The stored text is not a prefix of the text the caller expected (`load`'s `prefixOf`). The
 * checkpoint is intact and kept; the caller must not use it for this request.
 */
export class CheckpointMismatchError extends Error {
  override readonly name = "CheckpointMismatchError";
  /** @param checkpointId the checkpoint that does not fit; it stays stored. */
  constructor(readonly checkpointId: string) {
    super(`checkpoint ${checkpointId} does not cover a prefix of the request text`);
  }
}

/** Narrow a string read from the index to a reason. */
export function isCheckpointReason(value: string): value is CheckpointReason {
  return (CHECKPOINT_REASONS as readonly string[]).includes(value);
}

/** The index row of a checkpoint just written: used now, no hits yet. */
export function newCheckpointMeta(
  id: string,
  input: CheckpointWriteInput,
  stored: { textHash: string; bytes: number; chain: CheckpointMeta["chain"] },
  modelIdentity: string,
  now: number,
): CheckpointMeta {
  return {
    id,
    tenant: input.tenant,
    sessionId: input.sessionId,
    reason: input.reason,
    textHash: stored.textHash,
    textLength: input.payload.text.length,
    tokenCount: input.payload.tokens.length,
    toolUseIds: [...input.toolUseIds],
    bytes: stored.bytes,
    chain: stored.chain,
    modelIdentity,
    createdAt: now,
    lastUsedAt: now,
    hits: 0,
  };
}
