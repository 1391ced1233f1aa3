/** The load run's figures, computed from the turn records, the pool samples and the RSS readings. */
import { percentile } from "../../stats.ts";
import type { TurnRecord } from "./load-agent.ts";
import type { PeerTurnRecord } from "./peer-replay.ts";
import type { PoolSample } from "./pool-sampler.ts";

/** A stall: requests queued in a worker and no turn completing, for at least this long. */
export const STALL_MS = 30_000;

export interface LatencyFigures {
  n: number;
  ttftP50: number;
  ttftP99: number;
  turnP50: number;
  turnP99: number;
}

export function latency(turns: readonly { ttftMs: number; totalMs: number }[]): LatencyFigures {
  const ttft = turns.map((t) => t.ttftMs).filter(Number.isFinite);
  const total = turns.map((t) => t.totalMs).filter(Number.isFinite);
  return {
    n: turns.length,
    ttftP50: percentile(ttft, 50),
    ttftP99: percentile(ttft, 99),
    turnP50: percentile(total, 50),
    turnP99: percentile(total, 99),
  };
}

export interface FrontierFigures {
  planned: number;
  completed: number;
  failed: number;
  /** Failed turns by reason, with one example each. */
  failures: Map<string, { count: number; example: string }>;
  notSent: number;
  /** Conversations that ended early because a turn made no call (cut by max_tokens). */
  endedWithoutCall: number;
  resent: number;
  /** HTTP statuses (and socket error statuses) of every request, retries included. */
  statuses: Map<number, number>;
  /** Refusals inside a started stream, by the status they stand for (each retried by the client). */
  refusedInStream: Map<number, number>;
  /** Turns that needed more than one request (SDK, socket or in-stream retries). */
  retriedTurns: number;
  later: { completed: number; suffixOnly: number; resent: number; resentSuffixOnly: number };
  /** Decisions (x-frontier-cache) of completed turns 2+, HTTP turns only. */
  laterDecisions: Map<string, number>;
  prefilledLater: number;
  all: LatencyFigures;
  laterLatency: LatencyFigures;
  byProtocol: Map<string, { completed: number; failed: number; lat: LatencyFigures }>;
}

function bump<K>(map: Map<K, number>, key: K, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

export function frontierFigures(
  records: readonly TurnRecord[],
  planned: number,
  notSent: number,
  endedWithoutCall: number,
): FrontierFigures {
  const completed = records.filter((r) => r.outcome === "completed");
  const failures = new Map<string, { count: number; example: string }>();
  for (const r of records.filter((x) => x.outcome === "failed")) {
    const key = r.reason ?? "?";
    const entry = failures.get(key) ?? { count: 0, example: `${r.agent} turn ${r.turn}: ${r.detail ?? ""}` };
    entry.count++;
    failures.set(key, entry);
  }
  const statuses = new Map<number, number>();
  for (const r of records) for (const s of r.statuses) bump(statuses, s);
  const refusedInStream = new Map<number, number>();
  for (const r of records) for (const s of r.refusedInStream) bump(refusedInStream, s);
  const later = completed.filter((r) => r.turn > 1);
  const laterDecisions = new Map<string, number>();
  for (const r of later) if (r.decision) bump(laterDecisions, r.decision);
  const byProtocol = new Map<string, { completed: number; failed: number; lat: LatencyFigures }>();
  for (const protocol of new Set(records.map((r) => r.protocol))) {
    const mine = records.filter((r) => r.protocol === protocol);
    const done = mine.filter((r) => r.outcome === "completed");
    byProtocol.set(protocol, { completed: done.length, failed: mine.length - done.length, lat: latency(done) });
  }
  return {
    planned,
    completed: completed.length,
    failed: records.length - completed.length,
    failures,
    notSent,
    endedWithoutCall,
    resent: records.filter((r) => r.resent).length,
    statuses,
    refusedInStream,
    retriedTurns: records.filter((r) => r.statuses.length > 1 || r.refusedInStream.length > 0).length,
    later: {
      completed: later.filter((r) => !r.resent).length,
      suffixOnly: later.filter((r) => !r.resent && r.suffixOnly).length,
      resent: later.filter((r) => r.resent).length,
      resentSuffixOnly: later.filter((r) => r.resent && r.suffixOnly).length,
    },
    laterDecisions,
    prefilledLater: later.reduce((sum, r) => sum + r.promptTokens - r.cachedTokens, 0),
    all: latency(completed),
    laterLatency: latency(later),
    byProtocol,
  };
}

export interface PoolFigures {
  maxQueue: Map<string, number>;
  meanBusy: Map<string, number>;
  /** Stalls: [from, to] ms with requests queued and no turn completing for ≥ STALL_MS. */
  stalls: [number, number][];
  /** The samples at the longest stall's middle (what GET /admin/workers showed while stalled). */
  stalledView: PoolSample | undefined;
  /**
   * Per worker, time with requests queued while a sequence was free (the scheduler's invariant: no
   * waiter sleeps while a sequence it may use is free; with one tenant, its cap counts too), in all
   * and the longest run, as the heartbeats (every 500 ms) reported it.
   */
  idleQueued: Map<string, { totalMs: number; longestMs: number }>;
  /** The sample in the middle of the longest such run. */
  idleView: PoolSample | undefined;
}

export function poolFigures(samples: readonly PoolSample[], completionsMs: readonly number[]): PoolFigures {
  const maxQueue = new Map<string, number>();
  const busySum = new Map<string, number>();
  const count = new Map<string, number>();
  for (const s of samples) {
    for (const w of s.workers) {
      maxQueue.set(w.id, Math.max(maxQueue.get(w.id) ?? 0, w.queueDepth));
      bump(busySum, w.id, w.sequencesTotal - w.sequencesFree);
      bump(count, w.id);
    }
  }
  const meanBusy = new Map([...busySum].map(([id, sum]) => [id, sum / (count.get(id) ?? 1)]));
  const stalls = stallIntervals(
    samples,
    [...completionsMs].sort((a, b) => a - b),
  );
  const longest = [...stalls].sort((a, b) => b[1] - b[0] - (a[1] - a[0]))[0];
  const stalledView = longest ? samples.find((s) => s.atMs >= (longest[0] + longest[1]) / 2) : undefined;
  const idle = idleWhileQueued(samples);
  return { maxQueue, meanBusy, stalls, stalledView, ...idle };
}

function idleWhileQueued(samples: readonly PoolSample[]): Pick<PoolFigures, "idleQueued" | "idleView"> {
  const idleQueued = new Map<string, { totalMs: number; longestMs: number }>();
  const runStart = new Map<string, number>();
  let longest: { id: string; from: number; to: number } | undefined;
  for (const [i, s] of samples.entries()) {
    const dt = (samples[i + 1]?.atMs ?? s.atMs) - s.atMs;
    for (const w of s.workers) {
      const entry = idleQueued.get(w.id) ?? { totalMs: 0, longestMs: 0 };
      idleQueued.set(w.id, entry);
      if (w.queueDepth > 0 && w.sequencesFree > 0) {
        entry.totalMs += dt;
        const from = runStart.get(w.id) ?? s.atMs;
        runStart.set(w.id, from);
        const length = s.atMs + dt - from;
        entry.longestMs = Math.max(entry.longestMs, length);
        if (!longest || length > longest.to - longest.from) longest = { id: w.id, from, to: s.atMs + dt };
      } else runStart.delete(w.id);
    }
  }
  const middle = longest ? (longest.from + longest.to) / 2 : undefined;
  return { idleQueued, idleView: middle === undefined ? undefined : samples.find((s) => s.atMs >= middle) };
}

/** Runs of samples with a request queued somewhere during which no turn completed, ≥ STALL_MS long. */
function stallIntervals(samples: readonly PoolSample[], completions: readonly number[]): [number, number][] {
  const out: [number, number][] = [];
  let start: number | undefined;
  let last = 0;
  let next = 0;
  const close = (end: number) => {
    if (start !== undefined && end - start >= STALL_MS) out.push([start, end]);
  };
  for (const s of samples) {
    let completedSince: number | undefined;
    while (next < completions.length && (completions[next] as number) <= s.atMs) completedSince = completions[next++];
    if (!s.workers.some((w) => w.queueDepth > 0)) {
      close(last);
      start = undefined;
    } else if (start === undefined) {
      start = s.atMs;
    } else if (completedSince !== undefined) {
      close(completedSince);
      start = completedSince;
    }
    last = s.atMs;
  }
  close(last);
  return out;
}

export interface PeerFigures {
  completed: number;
  failed: number;
  failures: Map<string, number>;
  all: LatencyFigures;
  laterLatency: LatencyFigures;
  prefilledLater: number;
  cachedLater: number;
}

export function peerFigures(turns: readonly PeerTurnRecord[]): PeerFigures {
  const done = turns.filter((t) => t.outcome === "completed");
  const failures = new Map<string, number>();
  for (const t of turns) if (t.outcome === "failed") bump(failures, t.reason ?? "?");
  const later = done.filter((t) => t.turn > 1);
  return {
    completed: done.length,
    failed: turns.length - done.length,
    failures,
    all: latency(done),
    laterLatency: latency(later),
    prefilledLater: later.reduce((sum, t) => sum + t.prefilled, 0),
    cachedLater: later.reduce((sum, t) => sum + t.cached, 0),
  };
}
