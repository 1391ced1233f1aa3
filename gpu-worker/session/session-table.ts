import { type Engine, type EngineSequence, NoFreeSequenceError } from "../../native/engine-types.ts";
import { CheckpointScheduler } from "../checkpoints/checkpoint-scheduler.ts";
import type { SessionCheckpoints } from "../checkpoints/session-checkpoints.ts";
import { DATA_KEY_BYTES, type TenantDataKey } from "../checkpoints/state/sealed-file.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";
import { type LeasedSession, type LiveSession, leastValuableIdle } from "./live-session.ts";

export interface SessionTableOptions {
  /** Requests that may wait for a sequence; past it, OVERLOADED (529). */
  maxQueue: number;
  /**
   * How long after a tool turn its checkpoint write starts (default 250 ms). A tool result that
   * arrives sooner cancels the write and is served live; the loop's next pause writes it.
   */
  checkpointDelayMs?: number;
}

/**
 * Sessions on this worker. Requests on one session are serialised (a concurrent second one is
 * refused with SESSION_BUSY). When a session needs a sequence and none is free, the least valuable
 * idle session is parked to a disk checkpoint — one that ended its turn before one waiting on tool
 * results, least recently used first — and restored when it returns. With every sequence busy,
 * requests wait in a bounded queue.
 */
export class SessionTable {
  readonly #engine: Engine;
  readonly #checkpoints: SessionCheckpoints | undefined;
  readonly #options: SessionTableOptions;
  readonly #sessions = new Map<string, LiveSession>();
  readonly #waiters: (() => void)[] = [];
  /** The newest epoch seen per session (kept after parking, bounded). */
  readonly #epochs = new Map<string, number>();
  readonly #scheduler: CheckpointScheduler | undefined;
  /** Sessions parked by freeing them because their tool-frontier checkpoint already held them. */
  readonly #parkedOnToolFrontier = new Set<string>();

  constructor(
    engine: Engine,
    checkpoints: SessionCheckpoints | undefined,
    options: SessionTableOptions = { maxQueue: 64 },
  ) {
    this.#engine = engine;
    this.#checkpoints = checkpoints;
    this.#options = options;
    this.#scheduler =
      checkpoints && new CheckpointScheduler(checkpoints, options.checkpointDelayMs ?? 250, () => this.#wakeOne());
  }

  stats(): { resident: number; parked: number; active: number; queued: number } {
    let resident = 0;
    let active = 0;
    for (const s of this.#sessions.values()) {
      if (s.sequence) resident++;
      if (s.busy) active++;
    }
    const parked = (this.#checkpoints?.store.stats().byReason.parked ?? 0) + this.#parkedOnToolFrontier.size;
    return { resident, parked, active, queued: this.#waiters.length };
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
    if (epoch <= 0) return "ok";
    const key = sessionKey(tenant, sessionId);
    const known = this.#epochs.get(key) ?? 0;
    if (epoch < known) return "stale";
    if (epoch > known) {
      this.#epochs.delete(key);
      this.#epochs.set(key, epoch);
      if (this.#epochs.size > MAX_EPOCHS) this.#epochs.delete(this.#epochs.keys().next().value ?? "");
      const session = this.#sessions.get(key);
      if (known > 0 && session && !session.busy && !session.saving) {
        this.#scheduler?.cancel(session);
        this.#sessions.delete(key);
        session.sequence?.dispose();
        session.dataKey = undefined;
        log("session state superseded", { session: sessionId.slice(0, 8), epoch, was: known });
      }
    }
    return "ok";
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
    return this.#park(session);
  }

  /**
   * Take the session for one request (restoring it from disk if parked); call `release` after.
   * `dataKey`: the tenant's data key the request carries (the edge's `tenant_data_key`); the
   * session holds it while resident, for the checkpoints it writes and restores (none: it writes
   * none and opens none). A key of the wrong size is refused before anything is leased.
   */
  async lease(tenant: string, sessionId: string, dataKey?: Uint8Array): Promise<LeasedSession> {
    const owned = tenantDataKey(tenant, dataKey);
    const key = sessionKey(tenant, sessionId);
    this.#parkedOnToolFrontier.delete(key);
    let session = this.#sessions.get(key);
    // The live KV comes first: a checkpoint write that has not started is cancelled (the next tool
    // turn schedules a newer one). One that is reading the sequence (the engine's dump; parking or a
    // hand-over) finishes that step first; parking removes the session, so look it up again.
    while (session) {
      if (this.#scheduler?.cancel(session)) log("checkpoint deferred", { session: sessionId.slice(0, 8) });
      if (!session.saving) break;
      await session.saving;
      session = this.#sessions.get(key);
    }
    if (session?.busy) throw WorkerFailure.busy("another request on this session is still running");
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
    try {
      if (!session.sequence) {
        const sequence = await this.#acquireSequence();
        session.sequence = sequence;
        session.frontier = (await this.#checkpoints?.restore(session, sequence)) ?? undefined;
      }
    } catch (error) {
      session.busy = false;
      this.#wakeOne();
      throw error;
    }
    return session as LeasedSession;
  }

  release(session: LiveSession): void {
    session.busy = false;
    session.lastUsed = Date.now();
    this.#wakeOne();
  }

  /**
   * Release a session after a turn that ended in `tool_use` and schedule its tool-frontier
   * checkpoint off the critical path (see {@link CheckpointScheduler}).
   */
  saveInBackground(session: LeasedSession, _reason: "tool-frontier"): void {
    this.release(session);
    this.#scheduler?.schedule(session);
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
    return true;
  }

  /** Resolves when no checkpoint write is scheduled or in flight. */
  async settled(): Promise<void> {
    await this.#scheduler?.settled();
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

  async #acquireSequence(): Promise<EngineSequence> {
    for (;;) {
      try {
        return await this.#engine.acquireSequence();
      } catch (error) {
        if (!(error instanceof NoFreeSequenceError)) throw error;
      }
      const victim = leastValuableIdle(this.#sessions.values());
      if (victim) {
        await this.#park(victim);
        continue;
      }
      if (this.#waiters.length >= this.#options.maxQueue) {
        throw WorkerFailure.overloaded("all sequences are busy and the queue is full; retry shortly");
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Save the session to the store (when it has a frontier) and free its sequence; true if saved. */
  async #park(session: LiveSession): Promise<boolean> {
    const sequence = session.sequence;
    if (!sequence) return false;
    this.#scheduler?.cancel(session);
    session.busy = true;
    const parking = this.#parkNow(session, sequence);
    session.saving = parking.then(() => undefined);
    try {
      return await parking;
    } finally {
      session.saving = undefined;
    }
  }

  async #parkNow(session: LiveSession, sequence: EngineSequence): Promise<boolean> {
    let parked = false;
    try {
      // A session whose newest tool-frontier checkpoint holds its frontier is parked by freeing it.
      const saved = (await this.#scheduler?.park(session as LeasedSession)) ?? "none";
      if (saved === "durable") {
        this.#parkedOnToolFrontier.add(sessionKey(session.tenant, session.sessionId));
        if (this.#parkedOnToolFrontier.size > MAX_EPOCHS) {
          this.#parkedOnToolFrontier.delete(this.#parkedOnToolFrontier.values().next().value ?? "");
        }
      }
      parked = saved !== "none";
      log(parked ? "session parked" : "session evicted", {
        session: session.sessionId.slice(0, 8),
        tokens: sequence.tokens.length,
        waitingOnTools: (session.frontier?.toolUseIds.length ?? 0) > 0,
      });
    } catch (error) {
      log("session park failed; evicting", { session: session.sessionId.slice(0, 8), error: String(error) });
    } finally {
      // A parked session lives on disk only: its next lease restores it from the store.
      this.#sessions.delete(sessionKey(session.tenant, session.sessionId));
      session.sequence = undefined;
      session.frontier = undefined;
      session.dataKey = undefined;
      sequence.dispose();
      session.busy = false;
    }
    return parked;
  }

  #wakeOne(): void {
    this.#waiters.shift()?.();
  }
}

const MAX_EPOCHS = 100_000;

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
