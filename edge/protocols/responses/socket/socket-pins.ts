/**
 * Each lane's pin on a Responses WebSocket: the route (worker, epoch, session) its last recorded
 * turn ran on, so the lane's follow-ups go straight to that worker without asking the SessionDO.
 * A pin is a one-route `RouteCache` held by the socket (edge/session/route-cache.ts): the same rules
 * decide when it may be used (same prefix, worker still routable, taken out while a turn runs), the
 * same recorded turns write it (an ignored record or a refused stale epoch unpins, the DO's answer
 * re-pins), but no other session can evict it and it lasts as long as the socket. A stale pin costs
 * one fallback through the SessionDO, never the turn.
 *
 * The record lands just after a turn's last event; a lane's next turn waits for it (up to
 * `RECORD_WAIT_MS`), so a client that answers at once still finds its lane pinned.
 */
import { type CachedRoute, RouteCache } from "../../../session/route-cache.ts";

/** Lanes whose pins a socket keeps (the least recently used lane's pin goes first). */
const MAX_PINNED_LANES = 64;
/** How long a lane's next turn waits for the previous turn's record before it routes without it. */
export const RECORD_WAIT_MS = 1_000;

/** One lane's pin: a one-route cache that counts the records that wrote or dropped it. */
export class LanePin extends RouteCache {
  #records = 0;
  readonly #waiters = new Set<() => void>();

  /** Records (accepted or ignored) seen so far. */
  get records(): number {
    return this.#records;
  }

  override remember(tenant: string, sessionId: string, route: CachedRoute): void {
    super.remember(tenant, sessionId, route);
    this.#recorded();
  }

  override forget(tenant: string, sessionId: string): void {
    super.forget(tenant, sessionId);
    this.#recorded();
  }

  /** Resolves once a record after the `count`th has landed, or after `ms`. */
  recordedAfter(count: number, ms = RECORD_WAIT_MS): Promise<void> {
    return new Promise((resolve) => {
      if (this.#records > count) return resolve();
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const check = () => {
        if (this.#records > count) finish();
      };
      const timer = setTimeout(finish, ms);
      this.#waiters.add(check);
    });
  }

  #recorded(): void {
    this.#records++;
    for (const wake of [...this.#waiters]) wake();
  }
}

export class LanePins {
  readonly #pins = new Map<string, LanePin>();

  /** `ttlMs`: how long a pin is used without the DO confirming it again (the socket's lifetime). */
  constructor(readonly ttlMs: number) {}

  /** The pin of `lane` (a `stream_id`, or "" for events without one). */
  of(lane: string): LanePin {
    const pin = this.#pins.get(lane) ?? new LanePin(this.ttlMs, 1);
    this.#pins.delete(lane);
    this.#pins.set(lane, pin);
    if (this.#pins.size > MAX_PINNED_LANES) {
      const oldest = this.#pins.keys().next().value;
      if (oldest !== undefined) this.#pins.delete(oldest);
    }
    return pin;
  }
}
