/**
 * Placement of a new session, pure, the same for every client (hinted or not): among the workers
 * that can take one (up, not excluded, queue not full), prefer the one that holds the longest prefix
 * of the request's prompt (system + tools, then whole chunks of its messages: shared/prefix-chain.ts,
 * as the workers advertise what they hold) while it can start the session at once, is not much
 * busier than the least loaded worker and runs no more turns than its deeper prefix is worth;
 * otherwise the least loaded. Load counts the sessions a worker holds, the requests waiting for a
 * sequence and the placements made since its last heartbeat, per sequence.
 * Equally loaded workers (a pool whose every sequence holds an idle session reads the same load
 * everywhere) take turns: the one running fewer turns, then the one placed on least recently.
 *
 * Why "start at once" and not "a free sequence": a worker parks an idle resident session to its
 * checkpoint store when a new one needs the sequence (a checkpoint write), while a worker without
 * the prefix must load the prefix's anchor from the shared store or prefill it cold. Counting idle
 * residents as "full" sent every new session past the first `sequences` ones away from its prefix
 * (the recorded bench: 20% hits with 24 sessions on 2 × 4 sequences). */
import type { WorkerReport } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { advertisedDepths, deepestHeld } from "../../shared/prefix-chain.ts";
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
  /** When (ms) the pool last placed a session here; 0 or absent: never. */
  lastPlacedAt?: number;
}

export type PlacementReason = "prefix" | "load";

export interface Placement {
  worker: PoolWorker;
  reason: PlacementReason;
  /** Some worker of the pool advertised the prefix (a hit was possible). */
  prefixKnown: boolean;
  /** With reason "prefix": how deep the chosen worker holds the request's chain (0: system + tools only). */
  depth?: number;
}

export interface PlacementRequest {
  prefix?: string | undefined;
  /**
   * The request's text-side chain (shared/prefix-chain.ts; `chain[0]` is `prefix`): the worker
   * holding the deepest entry of it is preferred. Absent: `[prefix]`.
   */
  chain?: readonly string[] | undefined;
  /** URLs not to use (the worker that just failed). */
  exclude?: readonly string[];
}

/** How deep `w` holds `chain` (-1: not even its system + tools). */
export function heldDepth(w: Pick<PoolWorker, "prefixes">, chain: readonly string[]): number {
  return chain.length === 0 || w.prefixes.length === 0 ? -1 : deepestHeld(chain, new Set(w.prefixes));
}

function chainOf(request: PlacementRequest): string[] {
  if (request.chain && request.chain.length > 0) return [...request.chain];
  return request.prefix === undefined ? [] : [request.prefix];
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
 * How many more turns a prefix holder may run than the least loaded worker, per entry of the
 * request's chain it holds beyond that worker (system + tools counting as one, then each chunk of
 * the messages). A new session on the holder shares its engine with those turns (their prefill
 * first), while each entry more of prefix spares prefilling it: past this, the holder costs more
 * than it saves. Without it a burst of new sessions sharing only system + tools, or a few chunks,
 * piled onto their holders while other workers sat idle (the pool simulation at 64 workers: a
 * minute and more to the first token behind 7 other prefills; docs/bench/history/issue-45-sharing.md).
 */
export const PREFIX_TURNS_PER_CHUNK = 1;

/** Turns a worker runs: those its heartbeat reported (waiting ones included) and the sessions placed since. */
function turns(w: PoolWorker): number {
  return w.activeRequests + w.pending;
}

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
  // `activeRequests` counts every request holding a session, those waiting for a sequence included
  // (worker.proto): only the running ones take sequences from the placements made since.
  const running = Math.max(0, w.activeRequests - w.queueDepth);
  const waiting = w.queueDepth + Math.max(0, running + w.pending - w.sequencesTotal);
  return waiting >= capacity;
}

export function placeSession(workers: readonly PoolWorker[], request: PlacementRequest): Placement | undefined {
  const exclude = new Set(request.exclude ?? []);
  const usable = workers.filter((w) => w.state === "up" && !exclude.has(w.url) && !queueFull(w));
  const chain = chainOf(request);
  const depths = new Map(workers.map((w) => [w, heldDepth(w, chain)]));
  const prefixKnown = [...depths.values()].some((d) => d >= 0);
  // Equal load (e.g. every sequence holds an idle, parkable session): the worker running fewer turns
  // first, then the one placed on least recently, so new sessions do not pile onto the lowest ids
  // while others sit idle (each heartbeat resets `pending`: a tie broken by id sent every session of
  // a 64-worker pool to its first ~20 workers, whose checkpoint stores then evicted parked sessions).
  const byLoad = [...usable].sort(
    (a, b) =>
      workerLoad(a) - workerLoad(b) ||
      a.queueDepth - b.queueDepth ||
      turns(a) - turns(b) ||
      (a.lastPlacedAt ?? 0) - (b.lastPlacedAt ?? 0) ||
      a.id.localeCompare(b.id),
  );
  const worker = byLoad[0];
  if (prefixKnown && worker) {
    // A holder with a free sequence always qualifies; one whose sequences all hold (idle) sessions
    // only while it is within the margin of the least loaded worker; either only while the turns
    // ahead of the session there are worth the deeper prefix. Of those, the one holding the longest
    // prefix of the request; equally deep, the less loaded.
    const limit = workerLoad(worker) + PREFIX_LOAD_MARGIN;
    const fallbackDepth = depths.get(worker) ?? -1;
    let holder: PoolWorker | undefined;
    let deepest = -1;
    for (const w of byLoad) {
      const depth = depths.get(w) ?? -1;
      if (
        depth > deepest &&
        canStartNow(w) &&
        (workerLoad(w) < 1 || workerLoad(w) <= limit) &&
        turns(w) <= turns(worker) + PREFIX_TURNS_PER_CHUNK * (depth - fallbackDepth)
      ) {
        holder = w;
        deepest = depth;
      }
    }
    if (holder) return { worker: holder, reason: "prefix", prefixKnown, depth: deepest };
  }
  return worker && { worker, reason: "load", prefixKnown };
}

/**
 * Count a placement against its worker until the next heartbeat: one more pending session, placed
 * on at `now` (ms), and the prefix recorded as held at the depths a worker advertises (the worker
 * advertises it only from its next heartbeat; a new session with the same prefix within that
 * interval must still find its holder). True when the prefixes changed.
 */
export function notePlacement(
  worker: PoolWorker,
  prefix: string | undefined,
  chain: readonly string[] | undefined,
  now: number,
): boolean {
  worker.pending += 1;
  worker.lastPlacedAt = now;
  const full = chainOf({ prefix, chain });
  const added = advertisedDepths(full.length)
    .map((d) => full[d] ?? "")
    .filter((hash) => hash !== "" && !worker.prefixes.includes(hash));
  if (added.length === 0) return false;
  worker.prefixes = [...added, ...worker.prefixes].slice(0, MAX_PREFIXES);
  return true;
}
