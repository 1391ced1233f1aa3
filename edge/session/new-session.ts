/**
 * A conversation's first turn gets its worker by one rule, whether or not the client sent a hint
 * (DESIGN.md, "Sessions and affinity"): the pool's placement (edge/pool/placement.ts — the holder of
 * the longest prefix of the request's prompt while it can start the session at once, else the least loaded;
 * never a worker whose queue is full), counted against that worker until its next heartbeat. A hint
 * then binds the conversation's follow-ups to where it was placed; it is not itself a placement.
 */
import type { EdgeConfig } from "../config/config.ts";
import { ApiError } from "../core/errors.ts";
import type { PlacementRequest, PoolWorker } from "../pool/placement.ts";
import { countPlacement, forcedPlacement, placeNewSession, type RegionPlacement } from "../pool/pool-client.ts";
import { regionOrder } from "../pool/region-order.ts";
import { type NewSession, openSession, type ResolvedSession, type RouteBindings } from "./resolved-session.ts";
import type { RouteSource } from "./routing.ts";
import type { OpenArgs } from "./session-args.ts";

export interface NewPlacement {
  placement: RegionPlacement;
  /** Made from the edge's cached view (the home region's only worker up): the pool has not counted it yet. */
  forced: boolean;
}

/**
 * Place a new session (its first turn): the forced choice from the cached view, else the pool's,
 * asking the regions in regionOrder's order (another region first only for a much longer prefix).
 */
export async function placeNew(
  env: RouteBindings,
  config: EdgeConfig,
  pool: readonly PoolWorker[],
  request: PlacementRequest,
): Promise<NewPlacement> {
  const order = regionOrder(pool, config, request.chain ?? []);
  const forced = order[0]?.name === config.homeRegion ? forcedPlacement(pool, config, request) : undefined;
  if (forced) return { placement: forced, forced: true };
  const placed = await placeNewSession(env, config, request, order);
  if (!placed) throw noPlacement(pool);
  return { placement: placed, forced: false };
}

/**
 * Why no worker could take a new session: none is up, or every one that is up has a full queue (its
 * heartbeat's queue plus the sessions placed since). Both 529: a client retries either.
 */
function noPlacement(pool: readonly PoolWorker[]): ApiError {
  return pool.some((w) => w.state === "up")
    ? ApiError.overloaded("Every GPU worker's queue is full; retry shortly", 5)
    : ApiError.overloaded("No GPU worker is available; retry shortly", 5);
}

/** Tell the pool about a forced placement (no-op otherwise); never rejects. */
export function countIfForced(
  env: RouteBindings,
  config: EdgeConfig,
  placed: NewPlacement,
  request: PlacementRequest,
): Promise<void> {
  if (!placed.forced) return Promise.resolve();
  return countPlacement(env, config, placed.placement, request).catch((error: unknown) =>
    console.error("placement count failed", { worker: placed.placement.worker.url, error: String(error) }),
  );
}

/** A session this request creates, on `workerUrl` at epoch 1 (what `open` in claim mode answers for a fresh id). */
export function newSession(
  args: OpenArgs,
  workerUrl: string,
  source: RouteSource,
  create: NewSession,
): ResolvedSession {
  return { sessionId: args.sessionId, workerUrl, epoch: 1, source, create };
}

/**
 * Start writing a new session's SessionDO (and counting an edge-made placement) alongside its first
 * turn. A failure is logged: recordTurn then creates the session itself.
 */
export function beginCreation(env: RouteBindings, config: EdgeConfig, session: ResolvedSession): ResolvedSession {
  const create = session.create;
  if (!create || session.creating) return session;
  const created = openSession(env, create.args, create.region).then((opened) => {
    if (opened.status !== "ok" || opened.workerUrl !== session.workerUrl || opened.epoch !== 1) {
      throw new Error(`unexpected open result ${opened.status}`);
    }
  });
  const counted = create.counted
    ? countPlacement(env, config, create.counted, { prefix: create.args.prefix, chain: create.chain })
    : undefined;
  const creating = Promise.allSettled([created, counted]).then(([c, p]) => {
    const short = session.sessionId.slice(0, 8);
    if (c.status === "rejected") console.error("session create failed", { session: short, error: String(c.reason) });
    if (p.status === "rejected") console.error("placement count failed", { session: short, error: String(p.reason) });
    return c.status === "fulfilled";
  });
  return { ...session, creating };
}
