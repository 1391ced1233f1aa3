/**
 * Run one turn on the session's worker; when it fails before the response started because the
 * worker is unreachable or draining, move the session (failover.ts) and run it once more on the new
 * worker — transparently to the client. A failure after the response started is the protocol's
 * in-stream error (`overloaded_error`): the client retries, and that retry fails over here.
 * A worker whose connection dropped while it ran the request is marked down and the client gets a
 * 500 (`x-should-retry: false`): that request may be what killed it, so it never runs elsewhere.
 */
import type { EdgeConfig } from "../config/config.ts";
import { log } from "../core/log.ts";
import { markWorkerDown } from "../pool/pool-client.ts";
import type { ResolvedSession, RouteBindings } from "../session/session-route.ts";
import { failoverReason, isWorkerLost } from "../worker/worker-errors.ts";
import { type FailoverRequest, failover } from "./failover.ts";

export async function serveWithFailover(
  env: RouteBindings,
  config: EdgeConfig,
  first: ResolvedSession,
  request: FailoverRequest,
  attempt: (session: ResolvedSession) => Promise<Response>,
): Promise<Response> {
  try {
    return await attempt(first);
  } catch (error) {
    if (isWorkerLost(error)) {
      log("worker lost mid-request", { request: request.requestId, worker: first.workerUrl });
      await markWorkerDown(env, config, first.workerUrl);
      throw error;
    }
    const reason = failoverReason(error);
    if (reason === undefined) throw error;
    const moved = await failover(env, config, first, request, reason);
    if (!moved) throw error;
    request.onFailover?.(reason);
    return attempt(moved);
  }
}
