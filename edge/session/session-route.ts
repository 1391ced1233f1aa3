/**
 * Resolve a request to a SessionDO and its sticky worker (the pure ranking lives in routing.ts): the
 * sessions its signed IDs name, else its hint's, else a new session placed by the pool
 * (new-session.ts) — the same placement for a hinted first turn as for one without a hint.
 */
import { newSessionId } from "../../shared/ids.ts";
import type { EdgeConfig } from "../config/config.ts";
import { ApiError } from "../core/errors.ts";
import { type PoolWorker, placeSession } from "../pool/placement.ts";
import { poolView, routableUrls, unroutableUrls } from "../pool/pool-client.ts";
import { countIfForced, newSession, placeNew } from "./new-session.ts";
import { openSession, type ResolvedSession, type RouteBindings } from "./resolved-session.ts";
import { type CachedRoute, type RouteCache, type RouteLookup, routeCache } from "./route-cache.ts";
import {
  cleanHint,
  hintSessionId,
  type IdCandidate,
  idCandidates,
  type RoutingIds,
  verifyRoutingIds,
} from "./routing.ts";

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
  const upSince = new Map(pool.map((w) => [w.url, w.upSince ?? 0]));
  const hit = request.noCache ? undefined : await cachedRoute(env, request, candidates[0], workerUrls, upSince);
  if (hit) return hit;
  // A request whose system + tools differ from the session its replay or hint names is another
  // conversation reusing it (a title request, a memory subagent): it branches to its own session on
  // the same worker (stable per main session and prefix), never replacing the main one's live KV.
  let branchOf: { sessionId: string; workerUrl: string } | undefined;
  for (const candidate of candidates) {
    const branchOnPrefix = candidate.source === "replay";
    const opened = await openSession(env, {
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
  /** The hinted session is busy with a turn this request does not follow (a sibling): a new session. */
  let sibling = false;
  if (hint !== undefined && branchOf === undefined) {
    const sessionId = await hintSessionId(request.tenant, hint);
    const hinted = { ...base, sessionId, mode: "hint" as const, firstTurn: ids.firstTurn, prefix };
    // An existing hinted session is opened alongside the limiter, like one a signed ID names (its
    // lease is released if the request is refused); only creating it waits for the limiter.
    let opened = await openSession(env, { ...hinted, noCreate: true }, home);
    if (opened.status === "not_found") {
      // A new conversation: placed like any other (counted), then the hint binds its follow-ups there.
      await request.admitted;
      const placed = await placeNew(env, config, pool, prefix);
      const url = placed.placement.worker.url;
      const args = { ...hinted, workerUrls: withUrl(workerUrls, url), preferredWorker: url };
      [opened] = await Promise.all([
        openSession(env, args, placed.placement.region),
        countIfForced(env, config, placed, prefix),
      ]);
      if (opened.status === "ok" && opened.created) {
        return { ...opened, source: "hint", placement: placed.placement.reason };
      }
    }
    if (opened.status === "ok") return { ...opened, source: "hint" };
    if (opened.status === "branch") {
      if (opened.reason === "prefix") branchOf = { sessionId, workerUrl: opened.workerUrl };
      else sibling = true;
    }
  }
  await request.admitted;
  let beside: string | undefined;
  if (branchOf !== undefined && prefix !== undefined) {
    const sideId = await hintSessionId(request.tenant, `${branchOf.sessionId}\u0000${prefix}`);
    // Beside the main session; where that worker is gone, where this prefix would be placed.
    const preferred = workerUrls.includes(branchOf.workerUrl)
      ? branchOf.workerUrl
      : localPlacement(pool, workerUrls, prefix);
    const side = { ...base, sessionId: sideId, mode: "hint" as const, firstTurn: ids.firstTurn, prefix };
    const opened = await openSession(env, { ...side, ...(preferred && { preferredWorker: preferred }) }, home);
    if (opened.status === "ok") return { ...opened, source: "branch" };
    beside = preferred;
  }
  const sessionId = newSessionId();
  if (beside !== undefined) {
    const args = { ...base, sessionId, mode: "claim" as const, preferredWorker: beside, prefix };
    return newSession(args, beside, "branch", { args, region: home });
  }
  const placed = await placeNew(env, config, pool, prefix);
  const { worker, region, reason } = placed.placement;
  const args = {
    ...base,
    workerUrls: [worker.url],
    sessionId,
    mode: "claim" as const,
    prefix,
    preferredWorker: worker.url,
  };
  const counted = placed.forced ? { counted: placed.placement } : {};
  const session = newSession(args, worker.url, sibling ? "branch" : "new", { args, region, ...counted });
  return { ...session, placement: reason };
}

function withUrl(urls: readonly string[], url: string): string[] {
  return urls.includes(url) ? [...urls] : [...urls, url];
}

/** Where the pool's rule would place `prefix` on the edge's view (not counted): for the rare side session whose main worker is gone. */
function localPlacement(pool: readonly PoolWorker[], routable: readonly string[], prefix: string): string | undefined {
  return placeSession(
    pool.filter((w) => routable.includes(w.url)),
    { prefix },
  )?.worker.url;
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
  upSince: ReadonlyMap<string, number>,
): Promise<ResolvedSession | undefined> {
  const { tenant, ids, prefix } = request;
  const lookup = { tenant, firstTurn: ids.firstTurn, prefix, routable, upSince };
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
  const holding = env.SESSIONS.getByName(sessionId)
    .hold({
      tenant,
      requestId: request.requestId,
      workerUrl: route.workerUrl,
      epoch: route.epoch,
      assistantTurns: ids.assistantTurns,
    })
    .catch(() => false);
  return { sessionId, workerUrl: route.workerUrl, epoch: route.epoch, source: "hint", cached: true, holding };
}

/** Of a pinned and an isolate-cached route to one session, the one confirmed at the newer epoch (then later). */
function newest(a: CachedRoute | undefined, b: CachedRoute | undefined): CachedRoute | undefined {
  if (!a || !b) return a ?? b;
  return a.epoch !== b.epoch ? (a.epoch > b.epoch ? a : b) : a.at >= b.at ? a : b;
}
