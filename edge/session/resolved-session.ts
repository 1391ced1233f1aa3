/**
 * A request's session as routing resolved it (session-route.ts), what the turn needs to know about
 * it, and the one door to a SessionDO's `open` (with its region's location hint).
 */
import type { PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionWord, missWord } from "../../shared/cache-decision.ts";
import type { RegionConfig } from "../config/pool-config.ts";
import type { PlacementReason } from "../pool/placement.ts";
import type { RegionPlacement } from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import type { RouteCache } from "./route-cache.ts";
import type { RouteSource } from "./routing.ts";
import type { OpenArgs, SessionBindings } from "./session-do.ts";

/** What finding a session reaches: the SessionDOs and the pools. */
export type RouteBindings = SessionBindings & PoolBindings;

export interface ResolvedSession {
  sessionId: string;
  workerUrl: string;
  epoch: number;
  source: RouteSource;
  /** For a session placed by this request: why its worker was chosen. */
  placement?: PlacementReason;
  /** The SessionDO created this session for this request (a hinted or side session's first turn). */
  created?: boolean;
  /** The lease id this request holds, when not its request id (after a failover). */
  leaseId?: string;
  /**
   * A session this request creates (a fresh random id: nothing else can name it yet). Its SessionDO
   * is written alongside the turn (`beginCreation`), not before the worker is called.
   */
  create?: NewSession;
  /** That creation, once begun: true when it was written (never rejects); every later SessionDO call waits for it. */
  creating?: Promise<boolean>;
  /** Found in this isolate's route cache (route-cache.ts): the SessionDO was not asked before the worker. */
  cached?: boolean;
  /** A cached hinted route's lease (SessionDO.hold), taken alongside the turn; later SessionDO calls wait for it. */
  holding?: Promise<boolean>;
  /** The connection's pin the request carried (RouteRequest.pin): the turn's record updates it. */
  pin?: RouteCache;
}

export interface NewSession {
  args: OpenArgs;
  region?: RegionConfig | undefined;
  /** A placement the edge made from its view (forcedPlacement): the pool counts it alongside. */
  counted?: RegionPlacement;
}

/** This request's turn is the session's first: its worker holds nothing of it yet (it may try another). */
export function isNewSession(session: ResolvedSession): boolean {
  return session.create !== undefined || session.created === true;
}

/** A new SessionDO is created near its pool (the location hint only matters at creation). */
export function openSession(env: SessionBindings, args: OpenArgs, region?: RegionConfig) {
  const options = region?.locationHint ? { locationHint: region.locationHint } : {};
  return env.SESSIONS.getByName(args.sessionId, options).open(args);
}

/**
 * The `x-frontier-route` header: how the request found its session and worker. It names the
 * placement of a `new` session only (as it always has); hinted and branched sessions are placed by
 * the same rule, which the turn metrics' `placement` label counts.
 */
export function routeHeader(session: ResolvedSession): string {
  const route = [session.source, `epoch=${session.epoch}`];
  if (session.placement && session.source === "new") route.push(`placement=${session.placement}`);
  if (session.leaseId) route.push("failover");
  return route.join("; ");
}

/** The fields every turn's log line shares, whichever the protocol. */
export function turnLogFields(session: ResolvedSession, requestId: string, prompt: PromptProcessed | undefined) {
  return {
    request: requestId,
    session: session.sessionId.slice(0, 8),
    route: session.source,
    epoch: session.epoch,
    decision: prompt ? decisionWord(prompt.decision) : undefined,
    miss: prompt?.missReason ? missWord(prompt.missReason) : undefined,
    cached: prompt?.cachedTokens,
    prompt: prompt?.promptTokens,
  };
}
