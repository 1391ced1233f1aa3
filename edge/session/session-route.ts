/** Resolve a request to a SessionDO and its sticky worker (the pure ranking lives in routing.ts). */
import type { PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionWord, missWord } from "../../shared/cache-decision.ts";
import { newSessionId } from "../../shared/ids.ts";
import type { EdgeConfig } from "../config/config.ts";
import type { RegionConfig } from "../config/pool-config.ts";
import { ApiError } from "../core/errors.ts";
import type { PlacementReason } from "../pool/placement.ts";
import {
  countPlacement,
  forcedPlacement,
  placeNewSession,
  poolView,
  type RegionPlacement,
  routableUrls,
  unroutableUrls,
} from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { type CachedRoute, type RouteCache, type RouteLookup, routeCache } from "./route-cache.ts";
import {
  cleanHint,
  hintSessionId,
  type IdCandidate,
  idCandidates,
  type RouteSource,
  type RoutingIds,
  verifyRoutingIds,
} from "./routing.ts";
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

export interface RouteRequest {
  tenant: string;
  requestId: string;
  /** The IDs the request carries (see collectRoutingIds and its Responses counterpart). */
  ids: RoutingIds;
  /** A session the request names outright (a verified `previous_response_id`); tried first. */
  pinned?: IdCandidate;
  /** A client's conversation key (`x-claude-code-session-id`, `prompt_cache_key`). */
  hint: string | null;
  /** Fingerprint of the request's system + tools (shared/prefix-fingerprint.ts): placement prefers its holder. */
  prefix?: string;
  /**
   * The tenant limiter's answer (RequestContext.admitted). Opening the sessions the request's signed
   * IDs name runs alongside it; anything that could create a session or count a placement waits.
   */
  admitted?: Promise<void> | undefined;
  /** Ask the SessionDO even when this isolate has the route (a cached one the worker refused as stale). */
  noCache?: boolean;
  /**
   * One connection's own confirmed routes (a Responses WebSocket lane's pin): consulted with the
   * isolate's cache under the same rules, and written by the same recorded turns, but held by the
   * connection, so a burst of other sessions evicting the isolate's cache does not unpin it.
   */
  pin?: RouteCache;
}

export async function resolveSession(
  env: RouteBindings,
  config: EdgeConfig,
  request: RouteRequest,
): Promise<ResolvedSession> {
  const session = await resolveRoute(env, config, request);
  return request.pin ? { ...session, pin: request.pin } : session;
}

async function resolveRoute(env: RouteBindings, config: EdgeConfig, request: RouteRequest): Promise<ResolvedSession> {
  const { ids } = request;
  let [verified, pool] = await Promise.all([
    verifyRoutingIds(config.idSecret, request.tenant, ids),
    poolView(env, config),
  ]);
  if (routableUrls(pool, config).length === 0) pool = await poolView(env, config, true);
  const workerUrls = routableUrls(pool, config);
  if (workerUrls.length === 0) throw ApiError.overloaded("No GPU worker is available; retry shortly", 5);
  const base = {
    tenant: request.tenant,
    requestId: request.requestId,
    workerUrls,
    unroutable: unroutableUrls(pool),
    assistantTurns: ids.assistantTurns,
  };
  const home = config.regions[0];
  const candidates = idCandidates(verified);
  if (request.pinned) candidates.unshift(request.pinned);
  const prefix = request.prefix;
  const hit = request.noCache ? undefined : await cachedRoute(env, request, candidates[0], workerUrls);
  if (hit) return hit;
  // A request whose system + tools differ from the session its replay or hint names is another
  // conversation reusing it (a title request, a memory subagent): it branches to its own session on
  // the same worker (stable per main session and prefix), never replacing the main one's live KV.
  let branchOf: { sessionId: string; workerUrl: string } | undefined;
  let preferredWorker: string | undefined;
  for (const candidate of candidates) {
    const branchOnPrefix = candidate.source === "replay";
    const opened = await open(env, {
      ...base,
      sessionId: candidate.sessionId,
      mode: "existing",
      prefix,
      branchOnPrefix,
    });
    if (opened.status === "ok") return { ...opened, source: candidate.source };
    if (opened.status === "branch") {
      branchOf ??= { sessionId: candidate.sessionId, workerUrl: opened.workerUrl };
    }
  }
  const hint = cleanHint(request.hint);
  if (hint !== undefined && branchOf === undefined) {
    const sessionId = await hintSessionId(request.tenant, hint);
    const hinted = { ...base, sessionId, mode: "hint" as const, firstTurn: ids.firstTurn, prefix };
    // An existing hinted session is opened alongside the limiter, like one a signed ID names (its
    // lease is released if the request is refused); only creating it waits for the limiter.
    let opened = await open(env, { ...hinted, noCreate: true }, home);
    if (opened.status === "not_found") {
      await request.admitted;
      opened = await open(env, hinted, home);
    }
    if (opened.status === "ok") return { ...opened, source: "hint" };
    if (opened.status === "branch") {
      if (opened.reason === "prefix") branchOf = { sessionId, workerUrl: opened.workerUrl };
      else if (workerUrls.includes(opened.workerUrl)) preferredWorker = opened.workerUrl;
    }
  }
  await request.admitted;
  if (branchOf !== undefined && prefix !== undefined) {
    const sideId = await hintSessionId(request.tenant, `${branchOf.sessionId}\u0000${prefix}`);
    const preferred = workerUrls.includes(branchOf.workerUrl) ? branchOf.workerUrl : undefined;
    const side = { ...base, sessionId: sideId, mode: "hint" as const, firstTurn: ids.firstTurn, prefix };
    const opened = await open(env, { ...side, preferredWorker: preferred }, home);
    if (opened.status === "ok") return { ...opened, source: "branch" };
    preferredWorker = preferred;
  }
  const sessionId = newSessionId();
  if (preferredWorker !== undefined) {
    const args = { ...base, sessionId, mode: "claim" as const, preferredWorker, prefix };
    return newSession(args, preferredWorker, "branch", { args, region: home });
  }
  const forced = forcedPlacement(pool, config, prefix);
  const placed = forced ?? (await placeNewSession(env, config, { prefix }));
  if (!placed) throw ApiError.overloaded("No GPU worker is available; retry shortly", 5);
  const url = placed.worker.url;
  const args = { ...base, workerUrls: [url], sessionId, mode: "claim" as const, prefix, preferredWorker: url };
  const session = newSession(args, url, "new", { args, region: placed.region, ...(forced && { counted: forced }) });
  return { ...session, placement: placed.reason };
}

/**
 * The route this isolate's cache holds for the session the DO path would try first (the best ID
 * candidate, else the hinted session), when the DO would answer it unchanged (route-cache.ts). A
 * hinted one takes the session's lease alongside the turn, as `open` would have.
 */
async function cachedRoute(
  env: RouteBindings,
  request: RouteRequest,
  candidate: IdCandidate | undefined,
  routable: readonly string[],
): Promise<ResolvedSession | undefined> {
  const lookup = { tenant: request.tenant, firstTurn: request.ids.firstTurn, prefix: request.prefix, routable };
  const take = (args: RouteLookup) => newest(request.pin?.take(args), routeCache.take(args));
  if (candidate) {
    const route = take({ ...lookup, sessionId: candidate.sessionId, hinted: false, now: Date.now() });
    if (!route) return undefined;
    return {
      sessionId: candidate.sessionId,
      workerUrl: route.workerUrl,
      epoch: route.epoch,
      source: candidate.source,
      cached: true,
    };
  }
  const hint = cleanHint(request.hint);
  if (hint === undefined) return undefined;
  const sessionId = await hintSessionId(request.tenant, hint);
  const route = take({ ...lookup, sessionId, hinted: true, now: Date.now() });
  if (!route) return undefined;
  const { tenant, requestId } = request;
  const holding = env.SESSIONS.getByName(sessionId)
    .hold({
      tenant,
      requestId,
      workerUrl: route.workerUrl,
      epoch: route.epoch,
      assistantTurns: request.ids.assistantTurns,
    })
    .catch(() => false);
  return { sessionId, workerUrl: route.workerUrl, epoch: route.epoch, source: "hint", cached: true, holding };
}

/** Of a pinned and an isolate-cached route to one session, the one confirmed at the newer epoch (then later). */
function newest(a: CachedRoute | undefined, b: CachedRoute | undefined): CachedRoute | undefined {
  if (!a || !b) return a ?? b;
  return a.epoch !== b.epoch ? (a.epoch > b.epoch ? a : b) : a.at >= b.at ? a : b;
}

/** A session this request creates, on `workerUrl` at epoch 1 (what `open` in claim mode answers for a fresh id). */
function newSession(args: OpenArgs, workerUrl: string, source: RouteSource, create: NewSession): ResolvedSession {
  return { sessionId: args.sessionId, workerUrl, epoch: 1, source, create };
}

/**
 * Start writing a new session's SessionDO (and counting an edge-made placement) alongside its first
 * turn. A failure is logged: recordTurn then creates the session itself.
 */
export function beginCreation(env: RouteBindings, config: EdgeConfig, session: ResolvedSession): ResolvedSession {
  const create = session.create;
  if (!create || session.creating) return session;
  const created = open(env, create.args, create.region).then((opened) => {
    if (opened.status !== "ok" || opened.workerUrl !== session.workerUrl || opened.epoch !== 1) {
      throw new Error(`unexpected open result ${opened.status}`);
    }
  });
  const counted = create.counted ? countPlacement(env, config, create.counted, create.args.prefix) : undefined;
  const creating = Promise.allSettled([created, counted]).then(([c, p]) => {
    const short = session.sessionId.slice(0, 8);
    if (c.status === "rejected") console.error("session create failed", { session: short, error: String(c.reason) });
    if (p.status === "rejected") console.error("placement count failed", { session: short, error: String(p.reason) });
    return c.status === "fulfilled";
  });
  return { ...session, creating };
}

/** A new SessionDO is created near its pool (the location hint only matters at creation). */
function open(env: RouteBindings, args: OpenArgs, region?: RegionConfig) {
  const options = region?.locationHint ? { locationHint: region.locationHint } : {};
  return env.SESSIONS.getByName(args.sessionId, options).open(args);
}

/**
 * Record a finished turn (releases the lease). Failures are logged, never surfaced to the client.
 * A record the DO accepted puts the route in this isolate's cache (with the request's `prefix`) and
 * in the connection's pin, if the request carried one; one it ignored (the session moved past this
 * epoch) takes it out of both.
 */
export async function recordTurn(
  env: RouteBindings,
  session: ResolvedSession,
  turn: { tenant: string; requestId: string; messageId: string; toolUseIds: string[]; prefix: string | undefined },
): Promise<void> {
  await Promise.all([session.creating, session.holding]);
  const create = session.create && {
    sessionId: session.sessionId,
    workerUrl: session.workerUrl,
    prefix: session.create.args.prefix,
  };
  const { prefix, ...record } = turn;
  try {
    const recorded = await env.SESSIONS.getByName(session.sessionId).recordTurn({
      ...record,
      requestId: session.leaseId ?? turn.requestId,
      epoch: session.epoch,
      ...(create && { create }),
    });
    if (!recorded) forgetRoute(session, turn.tenant);
    else {
      const route = { workerUrl: session.workerUrl, epoch: session.epoch, prefix, at: Date.now() };
      for (const routes of [routeCache, session.pin])
        routes?.remember(turn.tenant, session.sessionId, { ...route, pendingToolUseIds: turn.toolUseIds.length });
    }
  } catch (error) {
    forgetRoute(session, turn.tenant);
    console.error("session record failed", { session: session.sessionId.slice(0, 8), error: String(error) });
  }
}

function forgetRoute(session: ResolvedSession, tenant: string): void {
  routeCache.forget(tenant, session.sessionId);
  session.pin?.forget(tenant, session.sessionId);
}

export async function releaseSession(
  env: RouteBindings,
  session: ResolvedSession,
  tenant: string,
  requestId: string,
): Promise<void> {
  // A new session whose creation never began has no SessionDO to release (and must not get one).
  if (session.create && !session.creating) return;
  await Promise.all([session.creating, session.holding]);
  try {
    await env.SESSIONS.getByName(session.sessionId).release({ tenant, requestId: session.leaseId ?? requestId });
  } catch (error) {
    console.error("session release failed", { session: session.sessionId.slice(0, 8), error: String(error) });
  }
}

/** The `x-frontier-route` header: how the request found its session and worker. */
export function routeHeader(session: ResolvedSession): string {
  const route = [session.source, `epoch=${session.epoch}`];
  if (session.placement) route.push(`placement=${session.placement}`);
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
