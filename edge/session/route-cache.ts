/**
 * A per-isolate cache of session routes the SessionDO confirmed: (tenant, session) → worker, epoch,
 * prefix fingerprint and how many tool calls the last turn left pending. A continuing turn whose
 * session is here skips the SessionDO on its way to the worker (the tenant's limiter is then its
 * one Durable Object round trip); everything the DO decides is still decided by it on a miss.
 *
 * An entry is written only from a recorded turn the DO accepted (its epoch was the session's), so it
 * holds what the DO held then. It is used only when the DO would have answered the same: same
 * prefix (a changed system or tools goes to the DO: branch, or a new recorded prefix), a hinted
 * request only when the last turn left no tool call pending and it is not a first turn, and the
 * worker still routable in the pool view and up without a break since the route was confirmed (a
 * worker that restarted, or came back from down or drain, may have lost the session to another
 * worker at a newer epoch, which a restarted worker cannot know: those turns go to the DO). A hit takes the entry out until that turn is recorded,
 * so a concurrent request on the session goes to the DO. Staleness is bounded: entries live
 * `ROUTE_CACHE_MS`; a worker marked down or draining, a failover, a refused stale epoch
 * (WorkerErrorCode.STALE_EPOCH: the turn is re-resolved through the DO) or a record the DO ignored
 * drops the entry. Keys carry the tenant: another tenant's request never finds an entry.
 */

/** How long a confirmed route is used without asking the SessionDO again. */
export const ROUTE_CACHE_MS = 30_000;
/** At most this many routes per isolate (the oldest go first). */
export const MAX_ROUTES = 4096;

export interface CachedRoute {
  workerUrl: string;
  epoch: number;
  /** The session's recorded system + tools fingerprint. */
  prefix: string | undefined;
  /** Tool calls of the last recorded turn still waiting for results. */
  pendingToolUseIds: number;
  /** When the DO confirmed it (ms). */
  at: number;
}

/** What the request would ask the DO: the session, how it was found, and what the DO compares. */
export interface RouteLookup {
  tenant: string;
  sessionId: string;
  /** Hinted requests are also checked against the DO's hint decision (routing.ts hintDecision). */
  hinted: boolean;
  firstTurn: boolean;
  prefix: string | undefined;
  /** Workers a session may stay on now (pool view); a route elsewhere is a miss. */
  routable: readonly string[];
  /**
   * Since when each worker has been up without a break (pool view, PoolWorker.upSince). A route
   * confirmed before its worker last came back (restarted, or back from down or drain) is a miss:
   * the session may have moved meanwhile, and a restarted worker no longer knows the newer epoch.
   */
  upSince?: ReadonlyMap<string, number>;
  now: number;
}

export class RouteCache {
  readonly #routes = new Map<string, CachedRoute>();

  constructor(
    readonly ttlMs = ROUTE_CACHE_MS,
    readonly capacity = MAX_ROUTES,
  ) {}

  /** The confirmed route when the DO would answer it unchanged; taken out until `remember` puts it back. */
  take(lookup: RouteLookup): CachedRoute | undefined {
    const key = routeKey(lookup.tenant, lookup.sessionId);
    const route = this.#routes.get(key);
    if (!route) return undefined;
    const cameBack = (lookup.upSince?.get(route.workerUrl) ?? 0) > route.at;
    if (lookup.now - route.at >= this.ttlMs || !lookup.routable.includes(route.workerUrl) || cameBack) {
      this.#routes.delete(key);
      return undefined;
    }
    if (route.prefix !== lookup.prefix) return undefined;
    if (lookup.hinted && (lookup.firstTurn || route.pendingToolUseIds > 0)) return undefined;
    this.#routes.delete(key);
    return route;
  }

  /** A turn the DO recorded at `route.epoch` on `route.workerUrl`. */
  remember(tenant: string, sessionId: string, route: CachedRoute): void {
    const key = routeKey(tenant, sessionId);
    this.#routes.delete(key);
    this.#routes.set(key, route);
    if (this.#routes.size > this.capacity) {
      const oldest = this.#routes.keys().next().value;
      if (oldest !== undefined) this.#routes.delete(oldest);
    }
  }

  forget(tenant: string, sessionId: string): void {
    this.#routes.delete(routeKey(tenant, sessionId));
  }

  get size(): number {
    return this.#routes.size;
  }
}

function routeKey(tenant: string, sessionId: string): string {
  return `${tenant}\u0000${sessionId}`;
}

/** This isolate's cache (module state lives as long as the isolate). */
export const routeCache = new RouteCache();
