import { type Engine, type EngineSequence, NoFreeSequenceError } from "../../native/engine-types.ts";
import type { Frontier } from "../continuation/frontier.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";

/** What the worker keeps for one conversation while its KV is resident. */
export interface LiveSession {
  readonly tenant: string;
  readonly sessionId: string;
  readonly sequence: EngineSequence;
  busy: boolean;
  lastUsed: number;
  /** Where the KV stops, recorded when a turn completes; undefined after a cancelled or failed turn. */
  frontier: Frontier | undefined;
}

/**
 * Sessions resident on this worker, each holding one engine sequence. Requests on one session are
 * serialised (a second concurrent one is refused with SESSION_BUSY); when no sequence is free the
 * least recently used idle session gives its sequence up.
 */
export class SessionTable {
  readonly #engine: Engine;
  readonly #sessions = new Map<string, LiveSession>();

  constructor(engine: Engine) {
    this.#engine = engine;
  }

  get size(): number {
    return this.#sessions.size;
  }

  get activeCount(): number {
    let n = 0;
    for (const s of this.#sessions.values()) if (s.busy) n++;
    return n;
  }

  /** Take the session for one request; call `release` when the request ends. */
  async lease(tenant: string, sessionId: string): Promise<LiveSession> {
    const key = sessionKey(tenant, sessionId);
    const existing = this.#sessions.get(key);
    if (existing) {
      if (existing.busy) throw WorkerFailure.busy("another request on this session is still running");
      existing.busy = true;
      existing.lastUsed = Date.now();
      return existing;
    }
    const sequence = await this.#acquireSequence();
    const session: LiveSession = { tenant, sessionId, sequence, busy: true, lastUsed: Date.now(), frontier: undefined };
    this.#sessions.set(key, session);
    return session;
  }

  release(session: LiveSession): void {
    session.busy = false;
    session.lastUsed = Date.now();
  }

  /** Forget a session and free its sequence. Returns false when it is not resident or is busy. */
  drop(tenant: string, sessionId: string): boolean {
    const key = sessionKey(tenant, sessionId);
    const session = this.#sessions.get(key);
    if (!session || session.busy) return false;
    this.#sessions.delete(key);
    session.sequence.dispose();
    return true;
  }

  async #acquireSequence(): Promise<EngineSequence> {
    try {
      return await this.#engine.acquireSequence();
    } catch (error) {
      if (!(error instanceof NoFreeSequenceError)) throw error;
    }
    const victim = this.#leastRecentlyUsedIdle();
    if (!victim) throw WorkerFailure.overloaded("all sequences are busy; retry shortly");
    log("session evicted", {
      session: victim.sessionId,
      reason: "sequence-needed",
      tokens: victim.sequence.tokens.length,
    });
    this.#sessions.delete(sessionKey(victim.tenant, victim.sessionId));
    victim.sequence.dispose();
    return this.#engine.acquireSequence();
  }

  #leastRecentlyUsedIdle(): LiveSession | undefined {
    let victim: LiveSession | undefined;
    for (const s of this.#sessions.values()) {
      if (!s.busy && (victim === undefined || s.lastUsed < victim.lastUsed)) victim = s;
    }
    return victim;
  }
}

function sessionKey(tenant: string, sessionId: string): string {
  return `${tenant}\u0000${sessionId}`;
}
