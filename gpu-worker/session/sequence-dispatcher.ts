/**
 * Who gets the engine's sequences: the one place a turn waits for a sequence, and the one step
 * (`pump`) that hands free sequences to waiters and parks idle sessions for them.
 *
 * Invariant, true after every `pump` (the session table pumps after every change that can free a
 * sequence or make a session parkable: release, park, eviction, a superseded or dropped session, a
 * failed or cancelled lease, a checkpoint dump that ended, a sharing window that ran out):
 *   no eligible waiter sleeps while a sequence is free, and none sleeps while an idle session could
 *   be parked for it — the parks in flight cover every eligible waiter, or no idle session is left.
 * "Eligible" is the tenant's cap (`tenantMaxSequences`), which binds only while another tenant
 * shares the worker (tenant-share.ts); a tenant alone may use every sequence.
 *
 * Every turn goes through the queue, newcomers too, so a sequence handed to a waiter cannot be taken
 * by a turn that arrived later: it is granted (counted as taken) before the engine's asynchronous
 * acquire starts, and put on the waiter's session the moment the acquire returns. A waiter whose
 * call is cancelled (its AbortSignal: the client went away, or the turn's wall clock ran out) leaves
 * the queue at once and is never started: no park, no restore, no sequence.
 */
import { type Engine, type EngineSequence, NoFreeSequenceError } from "../../native/engine-types.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";
import { type LiveSession, leastValuableIdle } from "./live-session.ts";
import { type FairQueueLimits, type QueueRefusal, TenantFairQueue } from "./tenant-fair-queue.ts";
import type { TenantShare } from "./tenant-share.ts";

/** What the dispatcher needs of the session table. */
export interface SequenceHolders {
  /** The sessions that hold (or are being given) a sequence. */
  sessions(): Iterable<LiveSession>;
  /** Checkpoint an idle session and free its sequence; settles once the sequence is free. */
  park(session: LiveSession): Promise<unknown>;
}

export interface DispatcherOptions {
  queue: FairQueueLimits;
  /** Sequences one tenant's running turns may hold while tenants share the worker (undefined or 0: all). */
  tenantMaxSequences?: number | undefined;
}

/** The queue's counts, for stats and metrics. */
export interface QueueStats {
  /** Turns waiting now. */
  waiting: number;
  /** How long the oldest of them has waited (ms; 0 when none waits). */
  oldestWaitMs: number;
  /** Waiters that left because their call was cancelled (client gone or wall clock), since start. */
  aborted: number;
  /** Turns refused because they would have waited past a bound (OVERLOADED), since start. */
  refused: Readonly<Record<QueueRefusal, number>>;
}

interface Waiter {
  readonly tenant: string;
  readonly session: LiveSession;
  readonly since: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (sequence: EngineSequence) => void;
  readonly reject: (error: unknown) => void;
  readonly onAbort: () => void;
}

export class SequenceDispatcher {
  readonly #engine: Engine;
  readonly #holders: SequenceHolders;
  readonly #share: TenantShare;
  readonly #cap: number;
  readonly #queue: TenantFairQueue<Waiter>;
  /** Sequences granted to waiters whose engine acquire has not returned yet, in all and by tenant. */
  #granting = 0;
  readonly #grantingBy = new Map<string, number>();
  /** Parks in flight: each frees one sequence when it settles. */
  #parking = 0;
  #parksStarted = 0;
  #pumping = false;
  #pumpAgain = false;
  #shareTimer: { at: number; timer: NodeJS.Timeout } | undefined;
  #aborted = 0;
  readonly #refused: Record<QueueRefusal, number> = { total: 0, tenant: 0 };

  constructor(engine: Engine, holders: SequenceHolders, share: TenantShare, options: DispatcherOptions) {
    this.#engine = engine;
    this.#holders = holders;
    this.#share = share;
    this.#cap = options.tenantMaxSequences ?? 0;
    this.#queue = new TenantFairQueue(options.queue);
  }

  /**
   * A sequence for `session`'s turn, put on `session.sequence` before the promise resolves. Waits in
   * the tenant-fair queue when none can be had now; refused with OVERLOADED when it would have to
   * wait and the queue (or its tenant's share) is full; rejected with the signal's reason, and gone
   * from the queue, as soon as `signal` aborts.
   */
  acquire(session: LiveSession, signal?: AbortSignal): Promise<EngineSequence> {
    if (signal?.aborted) {
      this.#aborted++;
      return Promise.reject(abortReason(signal));
    }
    const tenant = session.tenant;
    // Older waiters first: a sequence freed since the last dispatch goes to them, and what is left
    // waiting is what this turn's admission counts (not a queue about to move).
    this.pump();
    const admission = this.#queue.admission(tenant, this.#share.shared(tenant));
    const parksBefore = this.#parksStarted;
    return new Promise<EngineSequence>((resolve, reject) => {
      const waiter: Waiter = {
        tenant,
        session,
        since: Date.now(),
        signal,
        resolve,
        reject,
        onAbort: () => {
          if (!this.#queue.remove(waiter)) return;
          this.#aborted++;
          reject(abortReason(signal));
        },
      };
      this.#queue.push(waiter);
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.pump();
      // Still waiting, and nothing was set in motion for it: a turn that must wait past a bound is
      // refused, or takes the place of a waiter past its tenant's share (refused instead).
      if (admission.kind === "admit" || !this.#queue.has(waiter) || this.#parksStarted !== parksBefore) return;
      if (admission.kind === "refuse") this.#refuse(waiter, admission.bound);
      else if (this.#queue.has(admission.victim)) this.#refuse(admission.victim, "tenant");
    });
  }

  /** Take a waiting turn out of the queue and fail it with OVERLOADED, naming the bound. */
  #refuse(waiter: Waiter, bound: QueueRefusal): void {
    this.#queue.remove(waiter);
    waiter.signal?.removeEventListener("abort", waiter.onAbort);
    this.#refused[bound]++;
    waiter.reject(
      WorkerFailure.overloaded(
        bound === "total"
          ? "all sequences are busy and the queue is full; retry shortly"
          : "this tenant's waiting turns fill its share of the queue; retry shortly",
      ),
    );
  }

  /** Hand free sequences to waiters in fair order, and park idle sessions for those left. */
  pump(): void {
    if (this.#pumping) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#pumpAgain = false;
        this.#dispatch();
      } while (this.#pumpAgain);
    } finally {
      this.#pumping = false;
    }
  }

  /**
   * While several tenants share the worker, keep one sequence free: with none free, none coming and
   * no turn waiting, park the least valuable idle session now, off every turn's path, so another
   * tenant's next turn starts at once instead of parking one on its own critical path.
   */
  keepSpare(): void {
    if (this.#queue.size > 0 || this.#parking > 0 || this.#free() > 0 || !this.#share.shared()) return;
    const victim = leastValuableIdle(this.#holders.sessions());
    if (victim) this.#park(victim);
  }

  /** Sequences neither held nor granted. */
  #free(): number {
    return this.#engine.stats().sequencesFree - this.#granting;
  }

  /**
   * How many more sequences `tenant`'s running turns may take now: unbounded while it is alone
   * (or no cap is set), else its cap less what its running turns hold and what it was granted.
   */
  #headroom(tenant: string): number {
    if (this.#cap <= 0 || !this.#share.shared(tenant)) return Number.POSITIVE_INFINITY;
    let held = this.#grantingBy.get(tenant) ?? 0;
    for (const s of this.#holders.sessions()) if (s.tenant === tenant && s.busy && s.sequence && !s.saving) held++;
    return this.#cap - held;
  }

  /**
   * Waiters that could take a sequence now, were one free: each tenant's, up to its headroom (none
   * for a tenant over its cap, which must not hide another tenant's waiters).
   */
  #demand(): number {
    let demand = 0;
    for (const [tenant, waiters] of this.#queue.tenants()) {
      demand += Math.max(0, Math.min(waiters.length, this.#headroom(tenant)));
    }
    return demand;
  }

  stats(): QueueStats {
    let oldest = Number.POSITIVE_INFINITY;
    for (const [, waiters] of this.#queue.tenants()) oldest = Math.min(oldest, waiters[0]?.since ?? oldest);
    return {
      waiting: this.#queue.size,
      oldestWaitMs: Number.isFinite(oldest) ? Math.max(0, Date.now() - oldest) : 0,
      aborted: this.#aborted,
      refused: { ...this.#refused },
    };
  }

  #dispatch(): void {
    while (this.#free() > 0) {
      const next = this.#queue.takeNext((tenant) => this.#headroom(tenant) > 0);
      if (!next) break;
      this.#grant(next);
    }
    // No sequence is free for the eligible waiters left: park idle sessions for those no park covers.
    for (let short = this.#demand() - this.#parking; short > 0; short--) {
      const victim = leastValuableIdle(this.#holders.sessions());
      if (!victim) break;
      this.#park(victim);
    }
    this.#watchShares();
  }

  /** Give `waiter` a sequence: counted as taken now, on its session once the engine returns it. */
  #grant(waiter: Waiter): void {
    const { tenant, signal } = waiter;
    signal?.removeEventListener("abort", waiter.onAbort);
    this.#granting++;
    this.#grantingBy.set(tenant, (this.#grantingBy.get(tenant) ?? 0) + 1);
    const settle = () => {
      this.#granting--;
      const left = (this.#grantingBy.get(tenant) ?? 1) - 1;
      if (left > 0) this.#grantingBy.set(tenant, left);
      else this.#grantingBy.delete(tenant);
    };
    this.#engine.acquireSequence().then(
      (sequence) => {
        settle();
        if (signal?.aborted) {
          // Cancelled while the engine was handing it over: the sequence goes straight back.
          sequence.dispose();
          this.#aborted++;
          waiter.reject(abortReason(signal));
          this.pump();
          return;
        }
        waiter.session.sequence = sequence;
        waiter.resolve(sequence);
        // The engine counted this sequence as taken before this callback uncounted the grant: a pump
        // in between saw one sequence too few free, and may have left a waiter asleep.
        this.pump();
      },
      (error: unknown) => {
        settle();
        // Not expected (every sequence the engine hands out goes through here): the turn is refused
        // as overloaded, which clients retry, rather than failed.
        if (error instanceof NoFreeSequenceError) {
          log("engine had no sequence the dispatcher counted as free", { tenant });
          waiter.reject(WorkerFailure.overloaded("no sequence is free; retry shortly"));
        } else waiter.reject(error);
        this.pump();
      },
    );
  }

  #park(victim: LiveSession): void {
    this.#parking++;
    this.#parksStarted++;
    void this.#holders
      .park(victim)
      .catch((error: unknown) => log("park failed", { error: String(error) }))
      .finally(() => {
        this.#parking--;
        this.pump();
      });
  }

  /**
   * A tenant held only by its cap is free of it once no other tenant has been seen for the sharing
   * window: pump again then, since no other event may come to wake its waiters.
   */
  #watchShares(): void {
    let at = Number.POSITIVE_INFINITY;
    for (const [tenant] of this.#queue.tenants()) {
      if (this.#headroom(tenant) <= 0) at = Math.min(at, this.#share.sharedUntil(tenant));
    }
    if (this.#shareTimer?.at === at) return;
    clearTimeout(this.#shareTimer?.timer);
    this.#shareTimer = undefined;
    if (!Number.isFinite(at)) return;
    const timer = setTimeout(
      () => {
        this.#shareTimer = undefined;
        this.pump();
      },
      // Due at the window's end exactly (a waiter is eligible from then on); one that fires early
      // finds the tenant still sharing, and the pump arms it again.
      Math.max(0, at - Date.now()),
    );
    timer.unref();
    this.#shareTimer = { at, timer };
  }
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new Error("the request was cancelled while it waited for a sequence");
}
