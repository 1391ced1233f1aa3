/**
 * Each lane's pin on a Responses WebSocket: the route (worker, epoch, session) its last recorded
 * turn ran on, so the lane's follow-ups go straight to that worker without asking the SessionDO.
 * A pin is a one-route `RouteCache` held by the socket (edge/session/route-cache.ts): the same rules
 * decide when it may be used (same prefix, worker still routable, taken out while a turn runs), the
 * same recorded turns write it (an ignored record or a refused stale epoch unpins, the DO's answer
 * re-pins), but no other session can evict it and it lasts as long as the socket. A stale pin costs
 * one fallback through the SessionDO, never the turn.
 */
import { RouteCache } from "../../session/route-cache.ts";

/** Lanes whose pins a socket keeps (the least recently used lane's pin goes first). */
const MAX_PINNED_LANES = 64;

export class LanePins {
  readonly #pins = new Map<string, RouteCache>();

  /** `ttlMs`: how long a pin is used without the DO confirming it again (the socket's lifetime). */
  constructor(readonly ttlMs: number) {}

  /** The pin of `lane` (a `stream_id`, or "" for events without one). */
  of(lane: string): RouteCache {
    const pin = this.#pins.get(lane) ?? new RouteCache(this.ttlMs, 1);
    this.#pins.delete(lane);
    this.#pins.set(lane, pin);
    if (this.#pins.size > MAX_PINNED_LANES) {
      const oldest = this.#pins.keys().next().value;
      if (oldest !== undefined) this.#pins.delete(oldest);
    }
    return pin;
  }
}
