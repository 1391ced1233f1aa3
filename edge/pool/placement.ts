/**
 * Placement of a new session, pure, the same for every client (hinted or not): among the workers
 * that can take one (up, not excluded, queue not full), prefer one that already holds the request's
 * prompt prefix (system + tools) while it can start the session at once and is not much busier than
 * the least loaded worker; otherwise the least loaded. Load counts the sessions a worker holds, the
 * requests waiting for a sequence and the placements made since its last heartbeat, per sequence.
 *
 * Why "start at once" and not "a free sequence": a worker parks an idle resident session to its
 * checkpoint store when a new one needs the sequence (a checkpoint write), while a worker without
 * the prefix must load the prefix's anchor from the shared store or prefill it cold. Counting idle
 * residents as "full" sent every new session past the first `sequences` ones away from its prefix
 * (the recorded bench: 20% hits with 24 sessions on 2 × 4 sequences). */
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { MAX_PREFIXES } from "./worker-report.ts";

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
  /** The most requests it queues for a sequence (WorkerReport.queue_capacity); 0 or absent: not reported. */
  queueCapacity?: number;
  /** Since when (ms) it has been up without a break: restarted, or back from down or drain, later than that. */
  upSince?: number;
  /** Configured in wrangler.toml (no heartbeat needed). */
  static: boolean;
  /** Sessions placed here since the last heartbeat. */
  pending: number;
  /** The ceiling of its credential (`sequencesTotal` is the claim up to it); null: a static member never heard from. */
  capacityCeiling?: number | null;
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

/** Sessions per sequence: resident sessions, requests waiting for a sequence and placements not yet reported. */
export function workerLoad(w: PoolWorker): number {
  return (w.residentSessions + w.pending + w.queueDepth) / Math.max(1, w.sequencesTotal);
}

/**
 * How much busier (sessions per sequence) a prefix holder whose sequences are all taken may be than
 * the least loaded worker and still get the session: half its sequences. Past that, spreading load
 * beats reusing the prefix.
 */
export const PREFIX_LOAD_MARGIN = 0.5;

/**
 * The worker can start one more session now: nothing waits for a sequence and fewer turns run (or
 * were just placed there) than it has sequences, so a sequence is free or holds an idle, parkable
 * session. A static member never heard from (no sequence count) is assumed able to.
 */
export function canStartNow(w: PoolWorker): boolean {
  return w.queueDepth === 0 && (w.sequencesTotal === 0 || w.activeRequests + w.pending < w.sequencesTotal);
}

/**
 * The worker's queue is full, or will be once the sessions placed since its last heartbeat start
 * (those beyond its free sequences wait): a new session there would be refused (OVERLOADED), so
 * placement skips it while the heartbeat says so.
 */
export function queueFull(w: PoolWorker): boolean {
  const capacity = w.queueCapacity ?? 0;
  if (capacity === 0 || w.sequencesTotal === 0) return false;
  const waiting = w.queueDepth + Math.max(0, w.activeRequests + w.pending - w.sequencesTotal);
  return waiting >= capacity;
}

export function placeSession(workers: readonly PoolWorker[], request: PlacementRequest): Placement | undefined {
  const exclude = new Set(request.exclude ?? []);
  const usable = workers.filter((w) => w.state === "up" && !exclude.has(w.url) && !queueFull(w));
  const prefix = request.prefix;
  const prefixKnown = prefix !== undefined && workers.some((w) => w.prefixes.includes(prefix));
  // Equal load (e.g. every sequence holds an idle, parkable session): the worker running fewer turns
  // first, so new sessions do not pile onto the lowest id while others sit idle.
  const byLoad = [...usable].sort(
    (a, b) =>
      workerLoad(a) - workerLoad(b) ||
      a.queueDepth - b.queueDepth ||
      a.activeRequests + a.pending - (b.activeRequests + b.pending) ||
      a.id.localeCompare(b.id),
  );
  const worker = byLoad[0];
  if (prefix !== undefined && worker) {
    // A holder with a free sequence always qualifies; one whose sequences all hold (idle) sessions
    // only while it is within the margin of the least loaded worker.
    const limit = workerLoad(worker) + PREFIX_LOAD_MARGIN;
    const holder = byLoad.find(
      (w) => w.prefixes.includes(prefix) && canStartNow(w) && (workerLoad(w) < 1 || workerLoad(w) <= limit),
    );
    if (holder) return { worker: holder, reason: "prefix", prefixKnown };
  }
  return worker && { worker, reason: "load", prefixKnown };
}

/**
 * Count a placement against its worker until the next heartbeat: one more pending session, and the
 * prefix recorded as held (the worker advertises it only from its next heartbeat; a new session with
 * the same prefix within that interval must still find its holder). True when the prefixes changed.
 */
export function notePlacement(worker: PoolWorker, prefix: string | undefined): boolean {
  worker.pending += 1;
  if (prefix === undefined || worker.prefixes.includes(prefix)) return false;
  worker.prefixes = [prefix, ...worker.prefixes].slice(0, MAX_PREFIXES);
  return true;
}
