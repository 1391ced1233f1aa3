import { type Engine, type EngineSequence, NoFreeSequenceError } from "../../native/engine-types.ts";
import { CheckpointScheduler } from "../checkpoints/checkpoint-scheduler.ts";
import type { SessionCheckpoints } from "../checkpoints/session-checkpoints.ts";
import { DATA_KEY_BYTES, type TenantDataKey } from "../checkpoints/state/sealed-file.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";
import { type LeasedSession, type LiveSession, leastValuableIdle } from "./live-session.ts";
import { TenantFairQueue } from "./tenant-fair-queue.ts";

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
}

/**
 * Sessions on this worker. Requests on one session are serialised (a concurrent second one is
 * refused with SESSION_BUSY). When a session needs a sequence and none is free, the least valuable
 * idle session is parked to a disk checkpoint — one that ended its turn before one waiting on tool
 * results, least recently used first — and restored when it returns. With every sequence busy,
 * requests wait in a bounded queue that is fair between tenants (tenant-fair-queue.ts), and one
 * tenant's running turns hold at most `tenantMaxSequences` sequences, so another tenant's turn
 * always finds one it can take without waiting for a running turn to end.
 */
export class SessionTable {
  readonly #engine: Engine;
  readonly #checkpoints: SessionCheckpoints | undefined;
  readonly #options: SessionTableOptions;
  readonly #sessions = new Map<string, LiveSession>();
  readonly #queue: TenantFairQueue;
  /** The two tenants that leased a session most recently, newest first, and when. */
  #recentTenants: { tenant: string; at: number }[] = [];
  /** A spare-keeping park is in flight (one at a time). */
  #sparing = false;
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
    this.#queue = new TenantFairQueue({
      total: options.maxQueue,
      perTenant: options.maxQueuePerTenant ?? Math.max(1, Math.floor(options.maxQueue / 4)),
    });
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
    return { resident, parked, active, queued: this.#queue.size };
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
    this.#recentTenants = [
      { tenant, at: Date.now() },
      ...this.#recentTenants.filter((r) => r.tenant !== tenant).slice(0, 1),
    ];
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
        const sequence = await this.#acquireSequence(tenant);
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
    this.#keepSpare();
  }

  /**
   * While several tenants share the worker, keep one sequence free: with none free and no turn
   * waiting, park the least valuable idle session now, off every turn's path, so another tenant's
   * next turn starts at once instead of parking one on its own critical path.
   */
  #keepSpare(): void {
    if (this.#sparing || this.#queue.size > 0 || this.#engine.stats().sequencesFree > 0) return;
    if (!this.#sharedRecently()) return;
    const victim = leastValuableIdle(this.#sessions.values());
    if (!victim) return;
    this.#sparing = true;
    void this.#park(victim)
      .catch((error: unknown) => log("spare park failed", { error: String(error) }))
      .finally(() => {
        this.#sparing = false;
        this.#wakeOne();
      });
  }

  /** Whether another tenant than `tenant` (any two tenants, when undefined) leased a session recently. */
  #sharedRecently(tenant?: string): boolean {
    const now = Date.now();
    const recent = this.#recentTenants.filter((r) => now - r.at < FAIR_SHARE_WINDOW_MS);
    return tenant === undefined ? recent.length > 1 : recent.some((r) => r.tenant !== tenant);
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
      this.#wakeOne();
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

  /**
   * A sequence for one of `tenant`'s turns: a free one, else one freed by parking the least valuable
   * idle session, else a wait in the tenant-fair queue. A tenant whose running turns hold its cap of
   * sequences waits even when one is free (it is kept for other tenants), and a tenant's newcomer
   * queues behind that tenant's own waiters.
   */
  async #acquireSequence(tenant: string): Promise<EngineSequence> {
    let again = false;
    for (;;) {
      if (this.#underCap(tenant) && (again || this.#queue.waiting(tenant) === 0)) {
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
      }
      const refused = again ? undefined : this.#queue.refusal(tenant, this.#sharedRecently(tenant));
      if (refused === "total")
        throw WorkerFailure.overloaded("all sequences are busy and the queue is full; retry shortly");
      if (refused === "tenant")
        throw WorkerFailure.overloaded("this tenant's waiting turns fill its share of the queue; retry shortly");
      await this.#queue.wait(tenant, again);
      again = true;
    }
  }

  /**
   * Whether `tenant`'s running turns hold fewer sequences than its cap. The cap keeps sequences for
   * other tenants, so it only binds while another tenant has leased one recently: a worker that
   * serves one tenant lets it use every sequence.
   */
  #underCap(tenant: string): boolean {
    const cap = this.#options.tenantMaxSequences;
    if (cap === undefined || cap === 0) return true;
    if (!this.#sharedRecently(tenant)) return true;
    let held = 0;
    for (const s of this.#sessions.values()) if (s.tenant === tenant && s.busy && s.sequence) held++;
    return held < cap;
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
    this.#queue.wakeNext((tenant) => this.#underCap(tenant));
  }
}

const MAX_EPOCHS = 100_000;
/** A tenant counts as "another tenant" for the sequence cap this long after its last lease. */
const FAIR_SHARE_WINDOW_MS = 60_000;

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
