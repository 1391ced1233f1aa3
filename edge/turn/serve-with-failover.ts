/**
 * Run one turn on the session's worker; when it fails before the response started because the
 * worker is unreachable (refused, or silent past the connect deadline) or draining, move the session
 * (failover.ts) and run it once more on the new worker — transparently to the client. A new session
 * that its worker refused with OVERLOADED (a full queue) is placed once more the same way, on another
 * worker, before a 529 reaches the client. A failure after the response started is the protocol's
 * in-stream error: the client retries, and that retry fails over here.
 * A worker whose connection dropped while it ran the request, or that went silent past a stream
 * deadline holding it, is marked down and the client gets a 500 (`x-should-retry: false`): that
 * request may be what killed or froze it, so it never runs elsewhere. Every worker that failed like
 * that (or was unreachable) is marked down at once (worker-down.ts).
 */
import type { EdgeConfig } from "../config/config.ts";
import type { MetricsBindings } from "../metrics/edge-metrics-do.ts";
import { isNewSession, type ResolvedSession, type RouteBindings } from "../session/resolved-session.ts";
import { type FailoverReason, failoverReason, isWorkerLost, WorkerOverloadedError } from "../worker/worker-errors.ts";
import { type FailoverRequest, failover } from "./failover.ts";
import { markDownAfterFailure } from "./worker-down.ts";

export async function serveWithFailover(
  env: RouteBindings & MetricsBindings,
  config: EdgeConfig,
  first: ResolvedSession,
  request: FailoverRequest,
  attempt: (session: ResolvedSession) => Promise<Response>,
): Promise<Response> {
  const run = async (session: ResolvedSession): Promise<Response> => {
    try {
      return await attempt(session);
    } catch (error) {
      await markDownAfterFailure(env, config, session.workerUrl, error, request.requestId);
      throw error;
    }
  };
  try {
    return await run(first);
  } catch (error) {
    if (isWorkerLost(error)) throw error;
    const reason = moveReason(first, error);
    if (reason === undefined) throw error;
    const moved = await failover(env, config, first, request, reason);
    if (!moved) throw error;
    request.onFailover?.(reason);
    return run(moved);
  }
}

/** Why the session should run on another worker after `error`, if it should. */
function moveReason(session: ResolvedSession, error: unknown): FailoverReason | undefined {
  const reason = failoverReason(error);
  if (reason !== undefined) return reason;
  return error instanceof WorkerOverloadedError && isNewSession(session) ? "overloaded" : undefined;
}
