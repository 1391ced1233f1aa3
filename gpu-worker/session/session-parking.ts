/**
 * Parking: checkpoint an idle resident session and free its sequence. A parked session lives on
 * disk only (its next lease restores it); one whose newest tool-frontier checkpoint already holds
 * its frontier is parked by freeing it, nothing written. A write that fails evicts the session
 * anyway: parking always frees the sequence.
 */
import type { EngineSequence } from "../../native/engine-types.ts";
import type { CheckpointScheduler } from "../checkpoints/checkpoint-scheduler.ts";
import { log } from "../log.ts";
import type { LeasedSession, LiveSession } from "./live-session.ts";

/** Parked-on-tool-frontier sessions remembered (for the parked count; the oldest forgotten first). */
const MAX_REMEMBERED = 100_000;

export class SessionParking {
  /** Sessions parked by freeing them because their tool-frontier checkpoint already held them. */
  readonly #onToolFrontier = new Set<string>();

  /**
   * @param forget removes the session from the table once its sequence is freed.
   */
  constructor(
    private readonly scheduler: CheckpointScheduler | undefined,
    private readonly forget: (session: LiveSession) => void,
  ) {}

  /** Sessions parked on their tool-frontier checkpoint and not leased since. */
  get parkedOnToolFrontier(): number {
    return this.#onToolFrontier.size;
  }

  /** The session (by its table key) is leased again. */
  returned(key: string): void {
    this.#onToolFrontier.delete(key);
  }

  /**
   * Save the session to the store (when it has a frontier) and free its sequence; true if saved.
   * The session is busy meanwhile (no one else parks or leases it) and `saving` holds a new lease of
   * it until its sequence is free.
   */
  async park(session: LiveSession, key: string): Promise<boolean> {
    const sequence = session.sequence;
    if (!sequence) return false;
    this.scheduler?.cancel(session);
    session.busy = true;
    const parking = this.#parkNow(session, key, sequence);
    session.saving = parking.then(() => undefined);
    try {
      return await parking;
    } finally {
      session.saving = undefined;
    }
  }

  async #parkNow(session: LiveSession, key: string, sequence: EngineSequence): Promise<boolean> {
    let parked = false;
    try {
      const saved = (await this.scheduler?.park(session as LeasedSession)) ?? "none";
      if (saved === "durable") {
        this.#onToolFrontier.add(key);
        if (this.#onToolFrontier.size > MAX_REMEMBERED) {
          this.#onToolFrontier.delete(this.#onToolFrontier.values().next().value ?? "");
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
      this.forget(session);
      session.sequence = undefined;
      session.frontier = undefined;
      session.dataKey = undefined;
      sequence.dispose();
      session.busy = false;
    }
    return parked;
  }
}
