/**
 * A worker's own drain on shutdown: it asks the edge (`POST /internal/pool/drain`, bearer: the pool
 * credential it heartbeats with) to drain its row, and the edge calls this worker's Drain RPC back
 * and moves each handed-over session to another worker. The worker holds no admin token. A failed
 * call (edge unreachable, refused, timed out) is logged and the shutdown goes on: SIGTERM's save of
 * the resident sessions still runs.
 */
import { log } from "../log.ts";

export interface SelfDrainOptions {
  edgeUrl: string;
  /** This worker's pool credential (FRONTIER_POOL_TOKEN). */
  token: string;
  workerId: string;
  region: string;
  /** The edge waits for the turns in flight: bounded so the shutdown's own save still fits. */
  timeoutMs: number;
}

export interface SelfDrainOutcome {
  ok: boolean;
  /** The edge's HTTP status, or undefined when no answer came. */
  status: number | undefined;
  /** Sessions the edge moved to other workers (0 when not ok). */
  moved: number;
}

export async function drainThroughEdge(options: SelfDrainOptions): Promise<SelfDrainOutcome> {
  const endpoint = new URL("/internal/pool/drain", options.edgeUrl).href;
  log("worker self-drain", { edge: options.edgeUrl, worker: options.workerId });
  try {
    const response = await fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${options.token}` },
      body: JSON.stringify({ id: options.workerId, region: options.region }),
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const body = (await response.json().catch(() => ({}))) as { moved?: unknown };
    const moved = response.ok && typeof body.moved === "number" ? body.moved : 0;
    if (response.ok) log("worker self-drain done", { moved });
    else log("worker self-drain refused", { status: response.status });
    return { ok: response.ok, status: response.status, moved };
  } catch (error) {
    log("worker self-drain failed", { error: error instanceof Error ? error.message : String(error) });
    return { ok: false, status: undefined, moved: 0 };
  }
}
