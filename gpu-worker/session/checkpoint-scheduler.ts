import type { Frontier } from "../continuation/frontier.ts";
import { log } from "../log.ts";
import type { SessionCheckpoints } from "./session-checkpoints.ts";
import type { LeasedSession, LiveSession } from "./session-table.ts";

/** A tool-frontier checkpoint waiting for its start (cancelled by the session's next lease). */
export interface ScheduledWrite {
  readonly frontier: Frontier;
  timer: NodeJS.Timeout | undefined;
  cancelled: boolean;
  /** Settles once the write landed, failed or was cancelled. */
  readonly done: Promise<void>;
  settle(): void;
}

/**
 * Tool-frontier checkpoints, off the session's critical path. After a turn that ends in `tool_use`
 * the write is scheduled `delayMs` later: a tool result that arrives sooner (a fast tool) cancels
 * it and is served from the live KV at once; the next tool turn schedules a newer one, so a write
 * lands as soon as the loop pauses. Once started, only the engine's dump of the KV (the one step
 * that reads the sequence: llama.cpp cannot decode a context while it serialises it) holds the
 * session — `session.saving`; fsync, checksum, index commit and replica upload run while the next
 * turn already decodes. Writes of one session commit in order (a write starts after the previous
 * one of that session has landed).
 */
export class CheckpointScheduler {
  readonly #checkpoints: SessionCheckpoints;
  readonly #delayMs: number;
  readonly #inFlight = new Set<Promise<void>>();
  /** The newest write of each session, so the next one commits after it. */
  readonly #last = new WeakMap<LiveSession, Promise<void>>();

  readonly #onSequenceFree: () => void;

  /** @param onSequenceFree called when a write stops reading a session's sequence (a waiter may park it now). */
  constructor(checkpoints: SessionCheckpoints, delayMs: number, onSequenceFree: () => void) {
    this.#checkpoints = checkpoints;
    this.#delayMs = delayMs;
    this.#onSequenceFree = onSequenceFree;
  }

  /** Schedule a tool-frontier checkpoint of the session's current frontier (replacing a scheduled one). */
  schedule(session: LiveSession): void {
    const frontier = session.frontier;
    if (!frontier || !session.sequence) return;
    this.cancel(session);
    let settle = () => {};
    const done = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const write: ScheduledWrite = { frontier, timer: undefined, cancelled: false, done, settle };
    session.scheduled = write;
    this.#track(done);
    write.timer = setTimeout(() => void this.#start(session, write), this.#delayMs);
  }

  /** Cancel the session's write if it has not started; true when one was cancelled. */
  cancel(session: LiveSession): boolean {
    const write = session.scheduled;
    if (!write) return false;
    session.scheduled = undefined;
    write.cancelled = true;
    clearTimeout(write.timer);
    write.settle();
    return true;
  }

  /** Resolves when every scheduled or running write has landed, failed or been cancelled. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  async #start(session: LiveSession, write: ScheduledWrite): Promise<void> {
    try {
      await this.#last.get(session);
      if (write.cancelled || session.scheduled !== write) return;
      session.scheduled = undefined;
      // Only an idle resident session whose KV still ends at this frontier is written.
      const sequence = session.sequence;
      if (session.busy || session.saving || session.frontier !== write.frontier || !sequence) return;
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
      const landed = this.#checkpoints
        .save(session as LeasedSession, "tool-frontier", dumped)
        .then((saved) => {
          // Parking may skip its own write only when this checkpoint restores without a tail.
          if (saved?.exact) session.durable = { frontier: write.frontier, checkpointId: saved.id };
        })
        .catch((error: unknown) => log("checkpoint write failed", { reason: "tool-frontier", error: String(error) }))
        .finally(dumped);
      this.#last.set(session, landed);
      await landed;
    } finally {
      write.settle();
    }
  }

  #track(promise: Promise<void>): void {
    this.#inFlight.add(promise);
    void promise.finally(() => this.#inFlight.delete(promise));
  }
}
