/**
 * Placement of a new session, pure: among the workers that can take one, prefer those that already
 * hold a checkpoint of the request's prompt prefix (system + tools) and still have room for another
 * live session, then the least loaded. Load counts the sessions a worker holds, the requests waiting
 * for a sequence and the placements made since its last heartbeat, per sequence.
 */
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

export type WorkerState = "up" | "draining" | "drained" | "down";

/**
 * A pool member as placement sees it: the fields of its last heartbeat (`WorkerReport`; `id` is the
 * URL for a static member never heard from) plus the pool's own bookkeeping.
 */
export interface PoolWorker
  extends Pick<
    WorkerReport,
    | "id"
    | "url"
    | "region"
    | "modelIdentity"
    | "sequencesTotal"
    | "sequencesFree"
    | "queueDepth"
    | "activeRequests"
    | "residentSessions"
    | "prefixes"
  > {
  state: WorkerState;
  /** Configured in wrangler.toml (no heartbeat needed). */
  static: boolean;
  /** Sessions placed here since the last heartbeat. */
  pending: number;
  lastHeartbeat: number | null;
}

export type PlacementReason = "prefix" | "load";

export interface Placement {
  worker: PoolWorker;
  reason: PlacementReason;
  /** Some worker of the pool advertised the prefix (a hit was possible). */
  prefixKnown: boolean;
}

export interface PlacementRequest {
  prefix?: string | undefined;
  /** URLs not to use (the worker that just failed). */
  exclude?: readonly string[];
}

/** Sessions-per-sequence; a worker with nobody waiting and load below 1 has room for a live session. */
export function workerLoad(w: PoolWorker): number {
  return (w.residentSessions + w.pending + w.queueDepth) / Math.max(1, w.sequencesTotal);
}

export function hasRoom(w: PoolWorker): boolean {
  return w.queueDepth === 0 && (w.sequencesTotal === 0 || workerLoad(w) < 1);
}

export function placeSession(workers: readonly PoolWorker[], request: PlacementRequest): Placement | undefined {
  const exclude = new Set(request.exclude ?? []);
  const usable = workers.filter((w) => w.state === "up" && !exclude.has(w.url));
  const prefix = request.prefix;
  const prefixKnown = prefix !== undefined && workers.some((w) => w.prefixes.includes(prefix));
  const byLoad = [...usable].sort(
    (a, b) => workerLoad(a) - workerLoad(b) || a.queueDepth - b.queueDepth || a.id.localeCompare(b.id),
  );
  if (prefix !== undefined) {
    const holder = byLoad.find((w) => w.prefixes.includes(prefix) && hasRoom(w));
    if (holder) return { worker: holder, reason: "prefix", prefixKnown };
  }
  const worker = byLoad[0];
  return worker && { worker, reason: "load", prefixKnown };
}
