/**
 * Failover: the session's worker is unreachable, or it is draining, or it refused a new session as
 * overloaded. (An unreachable worker was already marked down: worker-down.ts.) A new worker is placed
 * — home region first, never the one that failed — and the SessionDO moves the session there with
 * epoch + 1, so a late answer from the old worker is ignored. The new worker continues from the
 * newest checkpoint in the shared store, or from the replayed history.
 */
import type { EdgeConfig } from "../config/config.ts";
import { log } from "../core/log.ts";
import { placeNewSession } from "../pool/pool-client.ts";
import type { ResolvedSession, RouteBindings } from "../session/resolved-session.ts";
import type { FailoverReason } from "../worker/worker-errors.ts";

export interface FailoverRequest {
  tenant: string;
  requestId: string;
  prefix?: string | undefined;
  /** Told when the session moved (edge metrics). */
  onFailover?: (reason: FailoverReason) => void;
}

/** The session on its new worker (holding a lease for this request), or undefined when no worker is left. */
export async function failover(
  env: RouteBindings,
  config: EdgeConfig,
  session: ResolvedSession,
  request: FailoverRequest,
  reason: FailoverReason,
): Promise<ResolvedSession | undefined> {
  const placed = await placeNewSession(env, config, {
    prefix: request.prefix,
    exclude: [session.workerUrl],
    moving: true,
  });
  if (!placed) {
    log("session failover impossible", { request: request.requestId, session: session.sessionId.slice(0, 8), reason });
    return undefined;
  }
  // A new session's SessionDO is written alongside its first attempt: it must exist to move.
  await session.creating;
  // A lease of its own: the failed attempt's release (possibly still in flight) must not drop it.
  const leaseId = `${request.requestId}.failover`;
  const moved = await env.SESSIONS.getByName(session.sessionId).reassign({
    tenant: request.tenant,
    requestId: leaseId,
    fromEpoch: session.epoch,
    workerUrl: placed.worker.url,
  });
  if (moved.status !== "ok") return undefined;
  log("session failover", {
    request: request.requestId,
    session: session.sessionId.slice(0, 8),
    reason,
    from: session.workerUrl,
    to: moved.workerUrl,
    epoch: moved.epoch,
  });
  return { ...session, workerUrl: moved.workerUrl, epoch: moved.epoch, leaseId };
}
