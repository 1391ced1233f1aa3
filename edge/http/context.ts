/**
 * What every route handler receives besides the request. `E` is the bindings the route reaches
 * (each room declares its own: `SessionBindings`, `PoolBindings`, …); the router passes the whole Env.
 */
import type { EdgeConfig } from "../config/config.ts";
import type { RateLimitSlot } from "../core/rate-limits.ts";
import type { ResponseSent } from "../core/response-sent.ts";
import type { EdgeTiming } from "../core/timing.ts";

export interface RequestContext<E> {
  env: E;
  config: EdgeConfig;
  requestId: string;
  waitUntil: (promise: Promise<unknown>) => void;
  /** The request's steps so far (a turn's `server-timing` header). */
  timing: EdgeTiming;
  /** When the client has the whole response; `after` queues the bookkeeping that waits for it. */
  sent: ResponseSent;
  /**
   * On a turn: settles once the tenant's authority admitted it (rejects with its refusal). Asked
   * alongside the session lookup; a handler waits for it before it calls a worker.
   */
  admitted?: Promise<void>;
  /** The caller's rate-limit state as its authority last answered: the response's rate-limit headers. */
  rateLimits: RateLimitSlot;
}
