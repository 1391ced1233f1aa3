import type { Engine, EngineSequence } from "../../native/engine-types.ts";
import { CheckpointScheduler } from "../checkpoints/checkpoint-scheduler.ts";
import type { SessionCheckpoints } from "../checkpoints/session-checkpoints.ts";
import { DATA_KEY_BYTES, type TenantDataKey } from "../checkpoints/state/sealed-file.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";
import { BusyWaiters } from "./busy-waiters.ts";
import type { LeasedSession, LiveSession } from "./live-session.ts";
import { type QueueStats, SequenceDispatcher } from "./sequence-dispatcher.ts";
import { SessionEpochs } from "./session-epochs.ts";
import { SessionParking } from "./session-parking.ts";
import { TenantShare } from "./tenant-share.ts";

export interface SessionTableOptions {
  /** Requests that may wait for a sequence; past it, OVERLOADED (529). */
  maxQueue: number;
  /**
   * How long after a tool turn its checkpoint write starts (default 250 ms). A tool result that
   * arrives sooner cancels the write and is served live; the loop's next pause writes it.
   */
  checkpointDelayMs?: number;
  /** Turns one tenant may have waiting (default: a quarter of `maxQueue`, at least 1). */
  maxQueuePerTenant?: number;
  /** Sequences one tenant's running turns may hold at once (default: all). */
  tenantMaxSequences?: number;
  /** How long a request waits for its session while another request holds it (default 30 s). */
  busyWaitMs?: number;
}

/**
 * Sessions on this worker. Requests on one session are serialised (a concurrent second one is
 * refused with SESSION_BUSY). When a session needs a sequence and none is free, the least valuable
 * idle session is parked to a disk checkpoint — one that ended its turn before one waiting on tool
 * results, least recently used first — and restored when it returns. With every sequence busy,
 * requests wait in a bounded queue that is fair between tenants, and one tenant's running turns hold
 * at most `tenantMaxSequences` sequences, so another tenant's turn always finds one it can take
 * without waiting for a running turn to end. Who gets a sequence, and when, is the dispatcher's
 * (sequence-dispatcher.ts); this table tells it after every change that can free a sequence or make
 * a session parkable (`#changed`), which is what keeps its invariant: no turn waits while a
 * sequence it may use is free or an idle session could be parked for it.
 */
export class SessionTable {
  readonly #checkpoints: SessionCheckpoints | undefined;
  readonly #sessions = new Map<string, LiveSession>();
  readonly #share = new TenantShare();
  readonly #dispatcher: SequenceDispatcher;
  readonly #epochs = new SessionEpochs();
  readonly #scheduler: CheckpointScheduler | undefined;
  readonly #parking: SessionParking;
  readonly #busyWaiters = new BusyWaiters();
  readonly #busyWaitMs: number;

  constructor(
    engine: Engine,
    checkpoints: SessionCheckpoints | undefined,
    options: SessionTableOptions = { maxQueue: 64 },
  ) {
    this.#checkpoints = checkpoints;
    this.#busyWaitMs = options.busyWaitMs ?? 30_000;
    this.#scheduler =
      checkpoints && new CheckpointScheduler(checkpoints, options.checkpointDelayMs ?? 250, () => this.#changed());
    this.#parking = new SessionParking(this.#scheduler, (s) => {
      const key = sessionKey(s.tenant, s.sessionId);
      if (this.#sessions.get(key) === s) this.#sessions.delete(key);
    });
    const holders = { sessions: () => this.#sessions.values(), park: (s: LiveSession) => this.#park(s) };
    this.#dispatcher = new SequenceDispatcher(engine, holders, this.#share, {
      queue: {
        total: options.maxQueue,
        perTenant: options.maxQueuePerTenant ?? Math.max(1, Math.floor(options.maxQueue / 4)),
      },
      tenantMaxSequences: options.tenantMaxSequences,
    });
  }

  stats(): { resident: number; parked: number; active: number; queued: number; queue: QueueStats } {
    let resident = 0;
    let active = 0;
    for (const s of this.#sessions.values()) {
      if (s.sequence) resident++;
      if (s.busy) active++;
    }
    const parked = (this.#checkpoints?.store.stats().byReason.parked ?? 0) + this.#parking.parkedOnToolFrontier;
    const queue = this.#dispatcher.stats();
    return { resident, parked, active, queued: queue.waiting, queue };
  }

  isResident(tenant: string, sessionId: string): boolean {
    return this.#sessions.get(sessionKey(tenant, sessionId))?.sequence !== undefined;
  }

  /**
   * Check a request's epoch (the SessionDO bumps it whenever the session moves). An epoch older than
   * one already served is refused ("stale"). A newer one on a session that is resident here means
   * the session ran elsewhere meanwhile: its live state here is out of date, so it is dropped (not
   * its checkpoints) and the next lease restores the newest checkpoint from the store. Epoch 0
   * (a caller without a SessionDO) is always admitted.
   */
  admitEpoch(tenant: string, sessionId: string, epoch: number): "ok" | "stale" {
    const key = sessionKey(tenant, sessionId);
    const { verdict, superseded } = this.#epochs.admit(key, epoch);
    const session = this.#sessions.get(key);
    if (superseded !== undefined && session && !session.busy && !session.saving) {
      this.#scheduler?.cancel(session);
      this.#sessions.delete(key);
      session.sequence?.dispose();
      session.dataKey = undefined;
      log("session state superseded", { session: sessionId.slice(0, 8), epoch, was: superseded });
      this.#changed();
    }
    return verdict;
  }

  /** Resident sessions (tenant, id), for drain. */
  residents(): { tenant: string; sessionId: string }[] {
    return [...this.#sessions.values()].map((s) => ({ tenant: s.tenant, sessionId: s.sessionId }));
  }

  /** Resolves once no request holds a session and no background write is in flight. */
  async idle(pollMs = 25): Promise<void> {
    for (;;) {
      await this.settled();
      if (![...this.#sessions.values()].some((s) => s.busy || s.saving || this.#scheduler?.isScheduled(s))) return;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /**
   * Hand a resident idle session over: checkpoint it ("parked", readable by every worker sharing the
   * store) and forget it here. Undefined when it is not resident or busy; else whether it was saved.
   */
  async handOver(tenant: string, sessionId: string): Promise<boolean | undefined> {
    const session = this.#sessions.get(sessionKey(tenant, sessionId));
    if (session?.saving) await session.saving;
    if (!session || session.busy || session.saving || !session.sequence) return undefined;
    try {
      return await this.#park(session);
    } finally {
      this.#changed();
    }
  }

  /**
   * Take the session for one request (restoring it from disk if parked); call `release` after.
   * `dataKey`: the tenant's data key the request carries (the edge's `tenant_data_key`); the
   * session holds it while resident, for the checkpoints it writes and restores (none: it writes
   * none and opens none). A key of the wrong size is refused before anything is leased.
   * `signal`: the call's cancellation (client gone, wall clock): a lease still waiting for a sequence
   * leaves the queue at once and rejects with the signal's reason, having taken nothing.
   */
  async lease(tenant: string, sessionId: string, dataKey?: Uint8Array, signal?: AbortSignal): Promise<LeasedSession> {
    const owned = tenantDataKey(tenant, dataKey);
    signal?.throwIfAborted();
    this.#share.leased(tenant);
    const key = sessionKey(tenant, sessionId);
    this.#parking.returned(key);
    let session = this.#sessions.get(key);
    const busyUntil = Date.now() + this.#busyWaitMs;
    for (;;) {
      // The live KV comes first: a checkpoint write that has not started is cancelled (the next tool
      // turn schedules a newer one). One that is reading the sequence (the engine's dump; parking or a
      // hand-over) finishes that step first; parking removes the session, so look it up again.
      while (session) {
        if (this.#scheduler?.cancel(session)) log("checkpoint deferred", { session: sessionId.slice(0, 8) });
        if (!session.saving) break;
        await session.saving;
        session = this.#sessions.get(key);
      }
      signal?.throwIfAborted();
      if (!session?.busy) break;
      // Another request holds it (often this client's own aborted turn, still stopping): wait for it.
      await this.#busyWaiters.next(signal, busyUntil, () =>
        WorkerFailure.busy("another request on this session is still running"),
      );
      session = this.#sessions.get(key);
    }
    if (!session) {
      session = {
        tenant,
        sessionId,
        dataKey: undefined,
        sequence: undefined,
        busy: false,
        lastUsed: Date.now(),
        frontier: undefined,
        saving: undefined,
      };
      this.#sessions.set(key, session);
    }
    session.busy = true;
    session.lastUsed = Date.now();
    session.dataKey = owned;
    if (session.sequence) return session as LeasedSession;
    try {
      const sequence = await this.#dispatcher.acquire(session, signal);
      session.frontier = (await this.#checkpoints?.restore(session, sequence)) ?? undefined;
      signal?.throwIfAborted();
    } catch (error) {
      this.#unlease(key, session);
      throw error;
    }
    return session as LeasedSession;
  }

  /**
   * A lease that did not go through (refused, cancelled, restore failed): a session that holds no
   * restored state gives its sequence back at once and is forgotten here (its checkpoints stay);
   * one whose state was restored stays resident, idle.
   */
  #unlease(key: string, session: LiveSession): void {
    session.busy = false;
    if (!session.frontier) {
      session.sequence?.dispose();
      session.sequence = undefined;
      session.dataKey = undefined;
      if (this.#sessions.get(key) === session) this.#sessions.delete(key);
    }
    this.#changed();
  }

  release(session: LiveSession): void {
    session.busy = false;
    session.lastUsed = Date.now();
    this.#changed();
    this.#dispatcher.keepSpare();
  }

  /**
   * Release a session after a turn that ended in `tool_use` and schedule its tool-frontier
   * checkpoint off the critical path (see {@link CheckpointScheduler}).
   */
  saveInBackground(session: LeasedSession, _reason: "tool-frontier"): void {
    this.release(session);
    this.#scheduler?.schedule(session);
  }

  /**
   * Let `read` use the sequence of `tenant`'s resident idle session (a shared-prefix copy reads it)
   * while the session is held as a checkpoint dump holds it (`saving`): a lease of it waits, parking
   * and eviction pass it by. "busy" (nothing run) while a request holds it or a write reads it;
   * "gone" when it is not resident.
   */
  async readIdle<T>(
    tenant: string,
    sessionId: string,
    read: (sequence: EngineSequence) => Promise<T>,
  ): Promise<{ read: T } | "busy" | "gone"> {
    const session = this.#sessions.get(sessionKey(tenant, sessionId));
    const sequence = session?.sequence;
    if (!session || !sequence) return "gone";
    if (session.busy || session.saving) return "busy";
    const reading = read(sequence);
    const held = reading.then(
      () => undefined,
      () => undefined,
    );
    session.saving = held;
    try {
      return { read: await reading };
    } finally {
      if (session.saving === held) session.saving = undefined;
      this.#dispatcher.pump();
    }
  }

  /** Forget a session and free its sequence. False when it is unknown or busy. */
  drop(tenant: string, sessionId: string): boolean {
    const key = sessionKey(tenant, sessionId);
    const session = this.#sessions.get(key);
    if (!session || session.busy || session.saving) return false;
    this.#scheduler?.cancel(session);
    this.#sessions.delete(key);
    session.sequence?.dispose();
    session.dataKey = undefined;
    this.#checkpoints?.forget(session);
    this.#changed();
    return true;
  }

  /** Resolves when no checkpoint write (a session's or an anchor) is scheduled or in flight. */
  async settled(): Promise<void> {
    await this.#scheduler?.settled();
    await this.#checkpoints?.anchors.settled();
    await Promise.all([...this.#sessions.values()].map((s) => s.saving));
  }

  /** Free every resident sequence, keeping checkpoints (the last step of a shutdown). */
  close(): void {
    for (const session of this.#sessions.values()) {
      this.#scheduler?.cancel(session);
      session.sequence?.dispose();
      session.dataKey = undefined;
    }
    this.#sessions.clear();
  }

  /** Graceful shutdown: checkpoint every resident idle session that has a frontier. */
  async saveAll(): Promise<number> {
    let saved = 0;
    for (const session of this.#sessions.values()) {
      this.#scheduler?.cancel(session);
      if (session.saving) await session.saving;
      if (!session.sequence || session.busy || !session.frontier || !this.#scheduler) continue;
      if (await this.#scheduler.saveForShutdown(session as LeasedSession)) saved++;
    }
    return saved;
  }

  #park(session: LiveSession): Promise<boolean> {
    return this.#parking.park(session, sessionKey(session.tenant, session.sessionId));
  }

  /** A sequence may have been freed, or a session become parkable: let the dispatcher hand it on. */
  #changed(): void {
    this.#busyWaiters.wakeAll();
    this.#dispatcher.pump();
  }
}

/** The request's data key for `tenant` (undefined when it sent none); a malformed one is a 400. */
function tenantDataKey(tenant: string, bytes: Uint8Array | undefined): TenantDataKey | undefined {
  if (bytes === undefined || bytes.length === 0) return undefined;
  if (bytes.length !== DATA_KEY_BYTES) {
    throw WorkerFailure.invalid(`tenant_data_key must be ${DATA_KEY_BYTES} bytes`, "tenant_data_key");
  }
  return { tenant, bytes: Buffer.from(bytes) };
}

function sessionKey(tenant: string, sessionId: string): string {
  return `${tenant}\u0000${sessionId}`;
}
