/**
 * The edge's use of the PoolDOs: a short-lived per-isolate view of every region's workers (existing
 * sessions need only "is my worker routable?"), placement of new sessions (home region first, other
 * regions only when the home pool has no worker up), and marking a worker down after a failure.
 */
import type { EdgeConfig } from "../config/config.ts";
import type { RegionConfig } from "../config/pool-config.ts";
import { type Placement, type PlacementRequest, type PoolWorker, placeSession } from "./placement.ts";
import type { PoolBindings } from "./pool-do.ts";

let cached: { at: number; key: string; workers: PoolWorker[] } | undefined;

export function poolStub(env: PoolBindings, region: RegionConfig) {
  return env.POOLS.getByName(`pool:${region.name}`, region.locationHint ? { locationHint: region.locationHint } : {});
}

function args(config: EdgeConfig, region: RegionConfig) {
  return { region: region.name, staticUrls: region.workers, timeoutMs: config.heartbeatTimeoutMs };
}

/** Every region's workers, home region first; reused for `POOL_CACHE_MS` unless `fresh`. */
export async function poolView(env: PoolBindings, config: EdgeConfig, fresh = false): Promise<PoolWorker[]> {
  const key = config.regions.map((r) => r.name).join(",");
  const now = Date.now();
  if (!fresh && cached && cached.key === key && now - cached.at < config.poolCacheMs) return cached.workers;
  const views = await Promise.all(
    config.regions.map(async (region) =>
      (await poolStub(env, region).view(args(config, region))).map((w) => ({ ...w, region: region.name })),
    ),
  );
  const workers = views.flat();
  cached = { at: now, key, workers };
  return workers;
}

export function invalidatePoolView(): void {
  cached = undefined;
}

/** URLs an existing session may stay on or move to: the home region's up workers, else any region's. */
export function routableUrls(workers: readonly PoolWorker[], config: EdgeConfig): string[] {
  const up = workers.filter((w) => w.state === "up");
  const home = up.filter((w) => w.region === config.homeRegion);
  return (home.length > 0 ? home : up).map((w) => w.url);
}

/** URLs of members known to be down, draining or drained: sessions on them move. */
export function unroutableUrls(workers: readonly PoolWorker[]): string[] {
  return workers.filter((w) => w.state !== "up").map((w) => w.url);
}

export interface RegionPlacement extends Placement {
  region: RegionConfig;
}

/**
 * Place a session (new, or `moving` from a failed worker): the regions' pools in `order` (default:
 * the home region's, then the others; region-order.ts puts a region holding a much longer prefix first).
 */
export async function placeNewSession(
  env: PoolBindings,
  config: EdgeConfig,
  request: PlacementRequest & { moving?: boolean },
  order: readonly RegionConfig[] = config.regions,
): Promise<RegionPlacement | undefined> {
  for (const region of order) {
    const placement = await poolStub(env, region).place({ ...args(config, region), ...request });
    if (placement) return { ...placement, region };
  }
  return undefined;
}

/**
 * A new session's placement when the cached view leaves no choice: the home region has exactly one
 * worker up, so `PoolDO.place` would pick it whatever the load or prefix. The pool still counts it
 * (`countPlacement`, alongside the turn). Undefined: ask the pool (`placeNewSession`).
 */
export function forcedPlacement(
  workers: readonly PoolWorker[],
  config: EdgeConfig,
  request: PlacementRequest,
): RegionPlacement | undefined {
  const home = workers.filter((w) => w.region === config.homeRegion);
  const region = regionNamed(config, config.homeRegion);
  if (!region || home.filter((w) => w.state === "up").length !== 1) return undefined;
  const placement = placeSession(home, request);
  return placement && { ...placement, region };
}

/** Tell the region's pool about a placement the edge made itself (forcedPlacement). */
export function countPlacement(
  env: PoolBindings,
  config: EdgeConfig,
  placement: RegionPlacement,
  request: PlacementRequest,
): Promise<void> {
  return poolStub(env, placement.region).notePlaced({
    ...args(config, placement.region),
    url: placement.worker.url,
    prefix: request.prefix,
    ...(request.chain && { chain: request.chain }),
  });
}

/** A worker the edge could not reach: every region's pool marks it down (it is in one of them). */
export async function markWorkerDown(env: PoolBindings, config: EdgeConfig, url: string): Promise<void> {
  invalidatePoolView();
  await Promise.all(config.regions.map((region) => poolStub(env, region).markDown(url)));
}

/** The region whose location hint a new session's SessionDO should get. */
export function regionNamed(config: EdgeConfig, name: string): RegionConfig | undefined {
  return config.regions.find((r) => r.name === name);
}
