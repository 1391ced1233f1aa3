/**
 * One simulated GPU worker: its sequences, the live sessions on them (the worker's own `LiveSession`
 * records, ranked for parking by `leastValuableIdle` from gpu-worker/session/live-session.ts), the
 * bounded FIFO of requests waiting for a sequence (as SessionTable), its checkpoint index (the real
 * `CheckpointIndex`, SQLite in memory: the store's lookups and its eviction order) under a token
 * budget, the shared-prefix index of the KV it holds (the real `SharedPrefixIndex`, keyed by the
 * trace's block keys: resident sessions and stored checkpoints, dropped when parked or evicted), and
 * what it advertises to placement (the real `PrefixAdvert`: the chains of the KV still held). No
 * model: a KV state is its token count and the prefix keys of the blocks it holds.
 */
import { randomBytes } from "node:crypto";
import type { PoolWorker } from "../../edge/pool/placement.ts";
import { CheckpointIndex } from "../../gpu-worker/checkpoints/store/checkpoint-index.ts";
import type { CheckpointMeta, CheckpointReason } from "../../gpu-worker/checkpoints/store/types.ts";
import type { Frontier } from "../../gpu-worker/continuation/frontier.ts";
import { SharedPrefixIndex } from "../../gpu-worker/continuation/shared-prefix/prefix-index.ts";
import { MAX_ADVERTISED, PrefixAdvert } from "../../gpu-worker/pool/prefix-advert.ts";
import { type LiveSession, leastValuableIdle } from "../../gpu-worker/session/live-session.ts";
import type { EngineSequence } from "../../native/engine-types.ts";
import type { KvContent } from "./sim-result.ts";

export const SIM_TENANT = "trace";
export const SIM_MODEL = "sim-model";

/**
 * Distinct blocks the shared-prefix index remembers: the worker's default (FRONTIER_PREFIX_INDEX_BLOCKS,
 * 65,536 blocks of 256 tokens) as the same tokens in the trace's 512-token blocks.
 */
export const SIM_INDEX_BLOCKS = 32_768;

/** A holder in the shared-prefix index: another session's resident sequence, or a stored checkpoint. */
export type SimPrefixHolder = { kind: "live"; sessionId: string } | { kind: "checkpoint"; id: string };

export const holderKey = (h: SimPrefixHolder): string =>
  h.kind === "live" ? `live:${h.sessionId}` : `checkpoint:${h.id}`;

export interface WorkerCapacity {
  sequences: number;
  /** KV cells per sequence: a longer request is refused. */
  contextTokens: number;
  /** Checkpoint budget, in tokens of KV state. */
  checkpointTokens: number;
  /** Requests that may wait for a sequence; past it the request is refused (OVERLOADED, 529). */
  maxQueue: number;
  /** System prefixes at least this long get a cold-anchor checkpoint when prefilled cold. */
  anchorMinTokens: number;
}

export interface Waiter {
  session: LiveSession;
  start(parkMs: number): void;
}

/** A sequence as the session table holds it; only its presence matters to the policies. */
function simSequence(index: number): EngineSequence {
  return { index } as unknown as EngineSequence;
}

/** The frontier a finished turn records; the policies read only whether it waits on tool results. */
export function simFrontier(tokens: number): Frontier {
  return { tokenCount: tokens, toolUseIds: [] } as unknown as Frontier;
}

export class SimWorker {
  readonly sessions = new Map<string, LiveSession>();
  readonly content = new Map<string, KvContent>();
  readonly waiters: Waiter[] = [];
  readonly index = new CheckpointIndex(":memory:");
  readonly shared = new SharedPrefixIndex<SimPrefixHolder>(SIM_INDEX_BLOCKS);
  readonly advert = new PrefixAdvert({
    isResident: (_tenant, sessionId) => this.sessions.get(sessionId)?.sequence !== undefined,
    hasCheckpoint: (id) => this.#stored.has(id),
  });
  readonly #stored = new Map<string, KvContent>();
  #resident = 0;
  /** The worker's engine (prefill, restore, park dumps) is free from this virtual time. */
  engineFreeAt = 0;
  engineBusyMs = 0;
  requests = 0;
  parks = 0;
  evictions = 0;
  /** The view placement gets: the last heartbeat's report plus the pool's bookkeeping. */
  view: PoolWorker;

  constructor(
    readonly id: string,
    readonly capacity: WorkerCapacity,
  ) {
    this.view = this.report();
  }

  get resident(): number {
    return this.#resident;
  }

  /** What a heartbeat reports now (gpu-worker/pool/report.ts fields), pending reset. */
  report(): PoolWorker {
    let active = 0;
    for (const s of this.sessions.values()) if (s.busy) active++;
    return {
      id: this.id,
      url: `http://${this.id}`,
      region: "sim",
      modelIdentity: SIM_MODEL,
      sequencesTotal: this.capacity.sequences,
      sequencesFree: this.capacity.sequences - this.#resident,
      queueDepth: this.waiters.length,
      activeRequests: active,
      residentSessions: this.#resident,
      prefixes: this.advert.list(MAX_ADVERTISED),
      state: "up",
      static: false,
      pending: 0,
      lastHeartbeat: 0,
      capacityCeiling: this.capacity.sequences,
    };
  }

  /** The session's record, created idle and not resident when unknown. */
  session(sessionId: string, now: number): LiveSession {
    let s = this.sessions.get(sessionId);
    if (!s) {
      s = {
        tenant: SIM_TENANT,
        sessionId,
        sequence: undefined,
        busy: false,
        lastUsed: now,
        frontier: undefined,
        saving: undefined,
        dataKey: undefined,
      };
      this.sessions.set(sessionId, s);
    }
    return s;
  }

  /**
   * Give `session` a sequence now if one is free or an idle session can be parked for it (the
   * worker's sequence dispatcher, gpu-worker/session/sequence-dispatcher.ts); the ms spent dumping
   * the parked session, or undefined when the request must wait.
   */
  tryAcquire(session: LiveSession, now: number): number | undefined {
    if (session.sequence) return 0;
    let parkMs = 0;
    if (this.#resident >= this.capacity.sequences) {
      const victim = leastValuableIdle(this.sessions.values());
      if (!victim) return undefined;
      parkMs = this.park(victim, now);
    }
    session.sequence = simSequence(this.#resident);
    this.#resident++;
    return parkMs;
  }

  /** Park an idle session: checkpoint it ("parked") when it has a frontier, free its sequence, forget it. */
  park(victim: LiveSession, now: number): number {
    const kv = this.content.get(victim.sessionId);
    let tokens = 0;
    if (victim.frontier && kv) {
      this.store("parked", victim.sessionId, `session:${victim.sessionId}:${now}`, kv, now);
      tokens = kv.tokens;
      this.parks++;
    }
    this.shared.drop(holderKey({ kind: "live", sessionId: victim.sessionId }));
    this.sessions.delete(victim.sessionId);
    this.content.delete(victim.sessionId);
    victim.sequence = undefined;
    this.#resident--;
    return tokens;
  }

  /** A finished turn: the session's sequence holds `kv`, indexed as a shared-prefix holder. */
  holdLive(sessionId: string, kv: KvContent): void {
    this.content.set(sessionId, kv);
    this.shared.hold(holderKey({ kind: "live", sessionId }), { kind: "live", sessionId }, kv.blockKeys);
  }

  /** A stored checkpoint's content, undefined once evicted or replaced. */
  storedKv(id: string): KvContent | undefined {
    return this.#stored.get(id);
  }

  /**
   * Write a checkpoint row (a session reason replaces the session's older one), index and advertise
   * it, then evict to the budget. `owner`: the session whose prefill left a cold anchor.
   */
  store(
    reason: CheckpointReason,
    sessionId: string,
    textHash: string,
    kv: KvContent,
    now: number,
    owner?: string,
  ): string {
    const id = randomBytes(16).toString("hex");
    const meta: CheckpointMeta = {
      id,
      tenant: SIM_TENANT,
      sessionId,
      reason,
      textHash,
      textLength: kv.tokens,
      tokenCount: kv.tokens,
      toolUseIds: [],
      bytes: kv.tokens,
      chain: [],
      modelIdentity: SIM_MODEL,
      createdAt: Math.round(now),
      lastUsedAt: Math.round(now),
      hits: 0,
    };
    for (const old of this.index.insert(meta, "", reason !== "cold-anchor")) this.#forget(old.id);
    this.#stored.set(id, kv);
    this.shared.hold(holderKey({ kind: "checkpoint", id }), { kind: "checkpoint", id }, kv.blockKeys);
    this.advert.holdCheckpoint(id, SIM_TENANT, sessionId, reason, owner);
    let total = this.index.totalBytes();
    if (total > this.capacity.checkpointTokens) {
      for (const row of this.index.evictionOrder(SIM_MODEL)) {
        if (total <= this.capacity.checkpointTokens) break;
        if (row.id === id) continue;
        this.index.delete(row.id);
        this.#forget(row.id);
        this.evictions++;
        total = this.index.totalBytes();
      }
    }
    return id;
  }

  /** The session's newest checkpoint (SessionCheckpoints.restore on lease), touched as loaded. */
  sessionCheckpoint(sessionId: string, now: number): KvContent | undefined {
    const meta = this.index.findBySession(SIM_TENANT, SIM_MODEL, sessionId);
    const kv = meta && this.#stored.get(meta.id);
    if (meta && kv) this.index.touch(meta.id, Math.round(now));
    return kv;
  }

  /** The longest stored prefix of a request (the ladder's disk rung): its tokens and checkpoint, undefined when none. */
  storedPrefix(
    prefixKeys: readonly string[],
    blockTokens: number,
    inputTokens: number,
  ): { tokens: number; id: string } | undefined {
    const lengths = this.index.prefixLengths(SIM_TENANT, SIM_MODEL, inputTokens, 1, 64);
    for (const length of lengths) {
      if (length % blockTokens !== 0) continue;
      const key = prefixKeys[length / blockTokens - 1];
      if (key === undefined) continue;
      const meta = this.index.findByPrefix(SIM_TENANT, SIM_MODEL, length, `blocks:${key}`, 1);
      if (meta) return { tokens: length, id: meta.id };
    }
    return undefined;
  }

  /** A checkpoint was just used: the last to be evicted. */
  touchCheckpoint(id: string, now: number): void {
    this.index.touch(id, Math.round(now));
  }

  #forget(id: string): void {
    this.#stored.delete(id);
    this.shared.drop(holderKey({ kind: "checkpoint", id }));
  }

  hasStoredPrefix(key: string, length: number): boolean {
    return this.index.findByPrefix(SIM_TENANT, SIM_MODEL, length, `blocks:${key}`, 1) !== undefined;
  }

  close(): void {
    this.index.close();
  }
}
