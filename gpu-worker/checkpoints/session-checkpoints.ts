import type { EngineSequence, Token } from "../../native/engine-types.ts";
import { segmentsFrom } from "../chat/engine/prompt-builder.ts";
import type { PromptSegment, RenderedPrompt } from "../chat/types.ts";
import { type Frontier, frontierFromJson, frontierToJson, type SampledTurnRecord } from "../continuation/frontier.ts";
import type { TurnMemory } from "../continuation/turn-memory.ts";
import { log } from "../log.ts";
import type { KeyedOwner, ResidentSession } from "./checkpointed-session.ts";
import { ColdAnchors } from "./cold-anchors.ts";
import { earlierTurns, earlierTurnsOf } from "./earlier-turns.ts";
import type { TenantDataKey } from "./state/sealed-file.ts";
import type { CheckpointStorage } from "./store/checkpoint-storage.ts";
import {
  CheckpointKeyError,
  type CheckpointMeta,
  type CheckpointPayload,
  type CheckpointReason,
  CorruptCheckpointError,
} from "./store/types.ts";

export interface CheckpointPolicy {
  /** Cold prefills whose header (system + tools) is at least this many tokens save an anchor. */
  anchorMinTokens: number;
  /** How long a lookup waits for the replica's metadata (`refresh`) before going on without it. */
  refreshTimeoutMs?: number;
  /**
   * Session checkpoints extend a stored prefix of them (the session's previous checkpoint, or the
   * tenant's system + tools anchor): only the KV cells past it are written, as a chunk (default on;
   * false writes every checkpoint whole, for comparison).
   */
  chunked?: boolean;
}

/** A session's replica metadata is pulled at most this often (lease and ladder of one request share one). */
const REFRESH_EVERY_MS = 1_000;
const MAX_REFRESHED = 10_000;

/** Which session a checkpoint belongs to. */
type SessionKey = { readonly tenant: string; readonly sessionId: string };

/** Why a stored checkpoint was not used: damaged (removed), or the request's key does not open it (kept). */
export type CheckpointFailure = "corrupt" | "wrong-key";

function failureOf(error: unknown): CheckpointFailure {
  return error instanceof CheckpointKeyError ? "wrong-key" : "corrupt";
}

/** The reasons a session checkpoint is saved with. */
type SessionSaveReason = Extract<CheckpointReason, "parked" | "tool-frontier" | "shutdown">;

/** A prefix of a request restored from disk: the KV now holds `keep` tokens; `append` follows. */
export interface RestoredPrefix {
  keep: number;
  append: Token[];
  tokenCount: number;
}

/**
 * The worker's use of the checkpoint store: park and restore sessions (KV state + frontier + the
 * exact turn, so a live-ID match works after a restore), restore the longest stored prefix of a
 * request, and save anchors at the end of system + tools during cold prefills.
 */
export class SessionCheckpoints {
  /**
   * @param memory the exact turn memory: a checkpoint carries the remembered bytes of the session's
   *   earlier assistant turns too, so another worker restoring it renders a full replay exactly as
   *   the KV holds it (a live-ID match after failover or drain).
   */
  constructor(
    readonly store: CheckpointStorage,
    readonly policy: CheckpointPolicy,
    private readonly rememberTurn: (tenant: string, turn: SampledTurnRecord) => void,
    private readonly memory?: TurnMemory,
  ) {
    this.anchors = new ColdAnchors(store, policy.anchorMinTokens, (key, meta, tokens) =>
      this.onStored?.(key, meta, tokens),
    );
  }

  /** The tenant's system + tools anchors, saved during cold prefills (off the turn's critical path). */
  readonly anchors: ColdAnchors;

  /**
   * Told of every checkpoint written here, with its tokens and the data key it was sealed under
   * (the shared-prefix index lists it as a holder of those tokens' blocks).
   */
  onStored: ((key: TenantDataKey, meta: CheckpointMeta, tokens: readonly Token[]) => void) | undefined;

  readonly #refreshed = new Map<string, number>();
  readonly #skippedWithoutKey: Record<SessionSaveReason, number> = { parked: 0, "tool-frontier": 0, shutdown: 0 };

  /**
   * Session checkpoints not written because the session held no data key (its request sent none):
   * nothing is ever written unkeyed or unsealed. By reason, since start.
   */
  skippedWithoutKey(): Readonly<Record<SessionSaveReason, number>> {
    return { ...this.#skippedWithoutKey };
  }

  /**
   * Before a lookup that would otherwise miss: pull the replica's metadata (other hosts'
   * checkpoints) of this tenant's shared prefixes and this session into the local index. Bounded by
   * `refreshTimeoutMs` (default 2 s); a failure or timeout only means the lookup sees less.
   */
  async refresh(tenant: string, sessionId: string): Promise<void> {
    const key = `${tenant}\u0000${sessionId}`;
    const now = Date.now();
    if (now - (this.#refreshed.get(key) ?? Number.NEGATIVE_INFINITY) < REFRESH_EVERY_MS) return;
    this.#refreshed.delete(key);
    this.#refreshed.set(key, now);
    if (this.#refreshed.size > MAX_REFRESHED) this.#refreshed.delete(this.#refreshed.keys().next().value ?? "");
    const refreshing = this.store.refresh(tenant, sessionId).catch((error: unknown) => {
      log("checkpoint refresh failed", { session: sessionId.slice(0, 8), error: String(error) });
      return 0;
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), this.policy.refreshTimeoutMs ?? 2_000);
    });
    const result = await Promise.race([refreshing, timeout]);
    clearTimeout(timer);
    if (result === "timeout") log("checkpoint refresh timed out", { session: sessionId.slice(0, 8) });
    else if (result > 0) log("checkpoints imported", { count: result, session: sessionId.slice(0, 8) });
  }

  /**
   * Save a resident session's KV and frontier: the new checkpoint's id and whether its state holds
   * every token (`exact`: always, a chained one is assembled whole), or undefined when it has no
   * frontier to save. It extends a stored prefix when one applies ({@link CheckpointPolicy.chunked}).
   * `onStateWritten` runs as soon as the sequence is no longer read (the engine dumped the KV, or
   * a stored prefix's state will be shared); durability (fsync, checksum, index, replica) follows
   * before the promise resolves.
   */
  async save(
    session: ResidentSession,
    reason: SessionSaveReason,
    onStateWritten?: () => void,
  ): Promise<{ id: string; exact: boolean } | undefined> {
    const frontier = session.frontier;
    const key = session.dataKey;
    if (!frontier || !key) {
      if (frontier) {
        this.#skippedWithoutKey[reason]++;
        log("checkpoint skipped", { reason, session: session.sessionId.slice(0, 8), why: "no data key" });
      }
      onStateWritten?.();
      return undefined;
    }
    const sequence = session.sequence;
    const tokens = [...sequence.tokens];
    const base = this.policy.chunked === false ? undefined : await this.#baseOf(session, frontier.text, tokens);
    const meta = await this.store.write(
      {
        tenant: session.tenant,
        key,
        sessionId: session.sessionId,
        reason,
        toolUseIds: [...frontier.toolUseIds],
        payload: {
          text: frontier.text,
          tokens,
          extra: {
            ...(frontierToJson(frontier) as object),
            earlierTurns: earlierTurns(this.memory, session.tenant, frontier),
          },
        },
        ...(base === undefined ? {} : { extends: base }),
      },
      async (path) => {
        try {
          await sequence.saveState(path);
        } finally {
          onStateWritten?.();
        }
      },
    );
    this.onStored?.(key, meta, tokens);
    log("checkpoint saved", {
      reason,
      session: session.sessionId.slice(0, 8),
      messages: frontier.messages.length,
      tokens: meta.tokenCount,
      bytes: meta.bytes,
      chain: meta.chain.length > 0 ? meta.chain.length : undefined,
    });
    return { id: meta.id, exact: true };
  }

  /**
   * The longest stored checkpoint of `tenant` on local disk whose tokens are a prefix of `tokens`
   * (the session's previous checkpoint, or the tenant's anchor): the new one stores only the cells
   * after it. Undefined when none applies.
   */
  async #baseOf(owner: KeyedOwner, text: string, tokens: readonly Token[]): Promise<string | undefined> {
    const key = owner.dataKey;
    const meta = key && this.store.findLongestPrefix(key, text, { minTokens: 1 });
    if (!key || !meta || meta.tokenCount > tokens.length) return undefined;
    const payload = await this.store.localPayload(meta, key);
    if (!payload || payload.tokens.length !== meta.tokenCount) return undefined;
    for (let i = 0; i < payload.tokens.length; i++) if (payload.tokens[i] !== tokens[i]) return undefined;
    return meta.id;
  }

  /**
   * Load the session's newest checkpoint into `sequence` with the session's data key; its frontier,
   * or undefined (cold: none stored, no key, a key that does not open it, or a damaged one).
   */
  async restore(session: SessionKey & KeyedOwner, sequence: EngineSequence): Promise<Frontier | undefined> {
    await this.refresh(session.tenant, session.sessionId);
    const meta = this.store.findBySession(session.tenant, session.sessionId);
    if (!meta) return undefined;
    const key = session.dataKey;
    if (!key) {
      log("checkpoint restore failed", {
        reason: "wrong-key",
        why: "no data key",
        session: session.sessionId.slice(0, 8),
      });
      return undefined;
    }
    const started = performance.now();
    try {
      const payload = await this.store.load(meta, key, (path, loaded) => loadInto(sequence, path, loaded));
      const frontier = frontierFromJson(payload.extra);
      for (const turn of earlierTurnsOf(payload.extra)) this.memory?.remember(session.tenant, turn.keys, turn);
      this.rememberTurn(session.tenant, frontier.lastTurn);
      // The session is resident again: a parked or shutdown copy is now stale (a tool-frontier
      // checkpoint stays, for failover, until the session's next tool turn replaces it).
      if (meta.reason !== "tool-frontier") this.store.remove(meta.id);
      log("kv cache hit checkpoint", {
        reason: meta.reason,
        tokens: meta.tokenCount,
        chain: meta.chain.length > 0 ? meta.chain.length : undefined,
        key: meta.id.slice(0, 8),
        load: `${(performance.now() - started).toFixed(1)}ms`,
        session: session.sessionId.slice(0, 8),
      });
      return frontier;
    } catch (error) {
      await sequence.truncate(0);
      log("checkpoint restore failed", { reason: reasonOf(error), session: session.sessionId.slice(0, 8) });
      return undefined;
    }
  }

  /**
   * Ladder step "disk checkpoint": the longest stored prefix of the rendered request for this
   * tenant, if it covers more than `keep` live tokens. Loads it into `sequence` and tokenizes the
   * rest of the request after it with `owner`'s data key. Undefined (and the sequence untouched)
   * when none applies; "wrong-key" (the sequence untouched: nothing was loaded) when the request
   * has no key (the index is keyed by it: nothing can be looked up) or its key does not open the
   * checkpoint; "corrupt" (the sequence cleared) when the load failed otherwise. `found`: the
   * caller's own lookup of the same prefix with the same key and `keep` (so it is counted once).
   */
  async restorePrefix(
    owner: KeyedOwner,
    rendered: RenderedPrompt,
    sequence: EngineSequence,
    keep: number,
    tokenize: (segments: readonly PromptSegment[]) => Promise<Token[]>,
    found?: { meta: CheckpointMeta | undefined },
  ): Promise<RestoredPrefix | CheckpointFailure | undefined> {
    const key = owner.dataKey;
    if (!key) {
      log("checkpoint lookup skipped", { reason: "wrong-key", why: "no data key" });
      return "wrong-key";
    }
    const meta = found ? found.meta : this.store.findLongestPrefix(key, rendered.text, { minTokens: keep + 1 });
    if (!meta) return undefined;
    const rest = segmentsFrom(rendered.segments, meta.textLength);
    if (!rest || rest.length === 0) return undefined;
    const started = performance.now();
    try {
      await this.store.load(meta, key, (path, loaded) => loadInto(sequence, path, loaded), {
        prefixOf: rendered.text,
      });
      log("kv cache hit text", {
        tokens: meta.tokenCount,
        chain: meta.chain.length > 0 ? meta.chain.length : undefined,
        key: meta.id.slice(0, 8),
        reason: meta.reason,
        load: `${(performance.now() - started).toFixed(1)}ms`,
      });
      return { keep: meta.tokenCount, append: await tokenize(rest), tokenCount: meta.tokenCount };
    } catch (error) {
      const failure = failureOf(error);
      // A key that does not open the checkpoint fails before the engine reads anything.
      if (failure === "corrupt") await sequence.truncate(0);
      log("checkpoint restore failed", { reason: reasonOf(error), key: meta.id.slice(0, 8) });
      return failure;
    }
  }

  /** A released session's checkpoints are no longer needed. */
  forget(session: SessionKey): void {
    for (;;) {
      const meta = this.store.findBySession(session.tenant, session.sessionId);
      if (!meta) return;
      this.store.remove(meta.id);
    }
  }
}

/** The log word for a failed restore: the two failures, else the error itself. */
function reasonOf(error: unknown): string {
  if (error instanceof CheckpointKeyError || error instanceof CorruptCheckpointError) return failureOf(error);
  return String(error);
}

/** Load a checkpoint's state (all of its tokens) into `sequence`. */
async function loadInto(sequence: EngineSequence, path: string, payload: CheckpointPayload): Promise<void> {
  await sequence.loadState(path, payload.tokens);
}
