import { log } from "../log.ts";
import type { CheckpointedSession, ResidentSession } from "./checkpointed-session.ts";
import type { SessionCheckpoints } from "./session-checkpoints.ts";

/** A tool-frontier checkpoint waiting for its start (cancelled by the session's next lease). */
interface ScheduledWrite {
  readonly frontier: NonNullable<CheckpointedSession["frontier"]>;
  timer: NodeJS.Timeout | undefined;
  cancelled: boolean;
  /** Settles once the write landed, failed or was cancelled. */
  readonly done: Promise<void>;
  settle(): void;
}

/** The stored checkpoint that holds exactly a session's frontier (parking it then writes nothing). */
interface DurableFrontier {
  readonly frontier: NonNullable<CheckpointedSession["frontier"]>;
  readonly checkpointId: string;
}

/**
 * When a session's checkpoints are written: the one scheduler of the worker's checkpoint writes.
 *
 * Tool-frontier checkpoints go off the session's critical path. After a turn that ends in
 * `tool_use` the write is scheduled `delayMs` later: a tool result that arrives sooner (a fast tool)
 * cancels it and is served from the live KV at once; the next tool turn schedules a newer one, so a
 * write lands as soon as the loop pauses. Once started, only the engine's dump of the KV (the one
 * step that reads the sequence: llama.cpp cannot decode a context while it serialises it) holds the
 * session — `session.saving`; fsync, checksum, index commit and replica upload run while the next
 * turn already decodes. Writes of one session commit in order (a write starts after the previous
 * one of that session has landed).
 *
 * Parking and shutdown writes are skipped when the newest tool-frontier checkpoint already holds
 * the session's frontier whole.
 */
export class CheckpointScheduler {
  readonly #checkpoints: SessionCheckpoints;
  readonly #delayMs: number;
  readonly #inFlight = new Set<Promise<void>>();
  /** The newest write of each session, so the next one commits after it. */
  readonly #last = new WeakMap<CheckpointedSession, Promise<void>>();
  /** Each session's tool-frontier write scheduled but not started. */
  readonly #scheduled = new WeakMap<CheckpointedSession, ScheduledWrite>();
  readonly #durable = new WeakMap<CheckpointedSession, DurableFrontier>();

  readonly #onSequenceFree: () => void;

  /** @param onSequenceFree called when a write stops reading a session's sequence (a waiter may park it now). */
  constructor(checkpoints: SessionCheckpoints, delayMs: number, onSequenceFree: () => void) {
    this.#checkpoints = checkpoints;
    this.#delayMs = delayMs;
    this.#onSequenceFree = onSequenceFree;
  }

  /** Schedule a tool-frontier checkpoint of the session's current frontier (replacing a scheduled one). */
  schedule(session: CheckpointedSession): void {
    const frontier = session.frontier;
    if (!frontier || !session.sequence) return;
    this.cancel(session);
    let settle = () => {};
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const write: ScheduledWrite = { frontier, timer: undefined, cancelled: false, done, settle };
    this.#scheduled.set(session, write);
    this.#track(done);
    write.timer = setTimeout(() => void this.#start(session, write), this.#delayMs);
  }

  /** Cancel the session's write if it has not started; true when one was cancelled. */
  cancel(session: CheckpointedSession): boolean {
    const write = this.#scheduled.get(session);
    if (!write) return false;
    this.#scheduled.delete(session);
    write.cancelled = true;
    clearTimeout(write.timer);
    write.settle();
    return true;
  }

  /** A tool-frontier write of the session is scheduled and has not started. */
  isScheduled(session: CheckpointedSession): boolean {
    return this.#scheduled.has(session);
  }

  /** Resolves when every scheduled or running write has landed, failed or been cancelled. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /**
   * Checkpoint a session that is about to lose its sequence (parking, hand-over): "durable" when its
   * newest tool-frontier checkpoint already holds its frontier (nothing is written), "written" after
   * a "parked" write, "none" without a frontier. Throws when the write fails.
   */
  async park(session: ResidentSession): Promise<"durable" | "written" | "none"> {
    try {
      if (this.isDurable(session)) return "durable";
      if (!session.frontier) return "none";
      return (await this.#checkpoints.save(session, "parked")) !== undefined ? "written" : "none";
    } finally {
      this.#durable.delete(session);
    }
  }

  /** Graceful shutdown: a "shutdown" checkpoint unless one in the store already holds the frontier; true if held. */
  async saveForShutdown(session: ResidentSession): Promise<boolean> {
    return this.isDurable(session) || (await this.#checkpoints.save(session, "shutdown")) !== undefined;
  }

  /** The session's frontier is held by a checkpoint still in the store. */
  isDurable(session: CheckpointedSession): boolean {
    const durable = this.#durable.get(session);
    if (!durable || durable.frontier !== session.frontier) return false;
    return this.#checkpoints.store.findBySession(session.tenant, session.sessionId)?.id === durable.checkpointId;
  }

  async #start(session: CheckpointedSession, write: ScheduledWrite): Promise<void> {
    try {
      await this.#last.get(session);
      if (write.cancelled || this.#scheduled.get(session) !== write) return;
      this.#scheduled.delete(session);
      // Only an idle resident session whose KV still ends at this frontier is written.
      const sequence = session.sequence;
      if (session.busy || session.saving || session.frontier !== write.frontier || !sequence) return;
      const landed = this.#write(session as ResidentSession, write);
      this.#last.set(session, landed);
      await landed;
    } finally {
      write.settle();
    }
  }

  /** The tool-frontier write itself: `session.saving` holds the session only while the KV is dumped. */
  #write(session: ResidentSession, write: ScheduledWrite): Promise<void> {
    let resolveDumped = () => {};
    session.saving = new Promise<void>((resolve) => {
      resolveDumped = resolve;
    });
    const saving = session.saving;
    const dumped = () => {
      if (session.saving !== saving) return;
      session.saving = undefined;
      resolveDumped();
      this.#onSequenceFree();
    };
    return this.#checkpoints
      .save(session, "tool-frontier", dumped)
      .then((saved) => {
        // Parking may skip its own write only when this checkpoint restores without a tail.
        if (saved?.exact) this.#durable.set(session, { frontier: write.frontier, checkpointId: saved.id });
      })
      .catch((error: unknown) => log("checkpoint write failed", { reason: "tool-frontier", error: String(error) }))
      .finally(dumped);
  }

  #track(promise: Promise<void>): void {
    this.#inFlight.add(promise);
    void promise.finally(() => this.#inFlight.delete(promise));
  }
}
