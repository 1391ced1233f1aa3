/**
 * A call to a worker failed in a way only a gone worker fails: unreachable, its connection dropped
 * while it ran the request, or it went silent past a stream deadline (a frozen or partitioned host).
 * Every region's pool marks it down at once — new sessions and the next turns of its sessions go
 * elsewhere — until its next heartbeat marks it up. Counted in the edge metrics with the deadline that
 * cut the stream. Called before the response started (serve-with-failover.ts) and after (the SSE
 * pump's in-stream error, turn-driver.ts).
 */
import type { EdgeConfig } from "../config/config.ts";
import { log } from "../core/log.ts";
import type { MetricsBindings } from "../metrics/edge-metrics-do.ts";
import { recordWorkerDown } from "../metrics/record.ts";
import { markWorkerDown } from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { WorkerDeadlineError, workerDownReason } from "../worker/worker-errors.ts";

/** Mark the worker down when `error` says it is gone; true when it did. Never throws. */
export async function markDownAfterFailure(
  env: PoolBindings & MetricsBindings,
  config: EdgeConfig,
  workerUrl: string,
  error: unknown,
  requestId: string,
): Promise<boolean> {
  const reason = workerDownReason(error);
  if (reason === undefined) return false;
  const deadline = error instanceof WorkerDeadlineError ? error.deadline : undefined;
  log("worker marked down", { request: requestId, worker: workerUrl, reason, ...(deadline && { deadline }) });
  try {
    await Promise.all([markWorkerDown(env, config, workerUrl), recordWorkerDown(env, reason, deadline)]);
  } catch (failure) {
    log("marking a worker down failed", { request: requestId, worker: workerUrl, error: String(failure) });
  }
  return true;
}
