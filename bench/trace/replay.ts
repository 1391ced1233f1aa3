/**
 * Open-loop replay of a scaled trace against one target: each request is sent at its (compressed)
 * arrival time, except that a next turn waits for the turn it continues (it needs that turn's
 * output). Requests overlap as the trace says; what the target does with them (batching, queueing,
 * parking) is what is measured.
 */
import type { ScaledRequest } from "./scale.ts";

/** What one request cost on a target. */
export interface TurnResult {
  /** Request sent → first output token. */
  ttftMs: number;
  /** Request sent → last byte. */
  e2eMs: number;
  /** Prompt tokens as the target counted them (its own framing included). */
  promptTokens: number;
  /** Prompt tokens the target reused from its cache. */
  cachedTokens: number;
  outputTokens: number;
  /** Time the target says the request waited before its prefill began (when it says). */
  queueMs?: number;
  /** The target's cache decision for the turn (Frontier's `x-frontier-cache` decision). */
  decision?: string;
}

/** One system under test. `parent` is the earlier turn this one continues (same target). */
export interface ReplayTarget {
  name: string;
  send(request: ScaledRequest, parent: ScaledRequest | undefined): Promise<TurnResult>;
}

export interface ReplayedRequest extends TurnResult {
  id: number;
  /** Replay clock (ms from the replay's start) when the request was sent. */
  sentMs: number;
  /** How long after its trace arrival it was sent (waiting for the turn it continues). */
  lateMs: number;
  /** Requests of this target in flight when it was sent (itself excluded). */
  inFlight: number;
}

export interface ReplayRun {
  target: string;
  requests: ReplayedRequest[];
  failures: { id: number; error: string }[];
  wallMs: number;
}

export async function replay(
  requests: readonly ScaledRequest[],
  target: ReplayTarget,
  progress: (message: string) => void,
): Promise<ReplayRun> {
  const started = performance.now();
  const done = new Map<number, Promise<boolean>>();
  const results: ReplayedRequest[] = [];
  const failures: ReplayRun["failures"] = [];
  let inFlight = 0;
  const run = async (request: ScaledRequest): Promise<boolean> => {
    const wait = request.arrivalMs - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const parent = request.parent === undefined ? undefined : requests[request.parent];
    if (parent && !(await done.get(parent.id))) {
      failures.push({ id: request.id, error: `its parent ${parent.id} failed` });
      return false;
    }
    const sentMs = performance.now() - started;
    const others = inFlight++;
    try {
      const result = await target.send(request, parent);
      results.push({ id: request.id, sentMs, lateMs: sentMs - request.arrivalMs, inFlight: others, ...result });
      if (results.length % 10 === 0) progress(`  ${target.name}: ${results.length}/${requests.length} requests`);
      return true;
    } catch (error) {
      failures.push({ id: request.id, error: error instanceof Error ? error.message : String(error) });
      return false;
    } finally {
      inFlight--;
    }
  };
  for (const request of requests) done.set(request.id, run(request));
  await Promise.all(done.values());
  results.sort((a, b) => a.id - b.id);
  return { target: target.name, requests: results, failures, wallMs: performance.now() - started };
}
