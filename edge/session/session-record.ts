/**
 * How a turn ends for its session: the recorded frontier (which also confirms the route for this
 * isolate's route cache and the connection's pin) or, for a turn that did not stop, the lease
 * released. Failures are logged, never surfaced to the client.
 */

import type { ResolvedSession, RouteBindings } from "./resolved-session.ts";
import { routeCache } from "./route-cache.ts";

/**
 * Record a finished turn (releases the lease). A record the DO accepted puts the route in this
 * isolate's cache (with the request's `prefix`) and in the connection's pin, if the request carried
 * one; one it ignored (the session moved past this epoch) takes it out of both.
 */
export async function recordTurn(
  env: RouteBindings,
  session: ResolvedSession,
  turn: { tenant: string; requestId: string; messageId: string; toolUseIds: string[]; prefix: string | undefined },
): Promise<void> {
  await Promise.all([session.creating, session.holding]);
  const create = session.create && {
    sessionId: session.sessionId,
    workerUrl: session.workerUrl,
    prefix: session.create.args.prefix,
  };
  const { prefix, ...record } = turn;
  try {
    const recorded = await env.SESSIONS.getByName(session.sessionId).recordTurn({
      ...record,
      requestId: session.leaseId ?? turn.requestId,
      epoch: session.epoch,
      ...(create && { create }),
    });
    if (!recorded) forgetRoute(session, turn.tenant);
    else {
      const route = { workerUrl: session.workerUrl, epoch: session.epoch, prefix, at: Date.now() };
      for (const routes of [routeCache, session.pin])
        routes?.remember(turn.tenant, session.sessionId, { ...route, pendingToolUseIds: turn.toolUseIds.length });
    }
  } catch (error) {
    forgetRoute(session, turn.tenant);
    console.error("session record failed", { session: session.sessionId.slice(0, 8), error: String(error) });
  }
}

function forgetRoute(session: ResolvedSession, tenant: string): void {
  routeCache.forget(tenant, session.sessionId);
  session.pin?.forget(tenant, session.sessionId);
}

export async function releaseSession(
  env: RouteBindings,
  session: ResolvedSession,
  tenant: string,
  requestId: string,
): Promise<void> {
  // A new session whose creation never began has no SessionDO to release (and must not get one).
  if (session.create && !session.creating) return;
  await Promise.all([session.creating, session.holding]);
  try {
    await env.SESSIONS.getByName(session.sessionId).release({ tenant, requestId: session.leaseId ?? requestId });
  } catch (error) {
    console.error("session release failed", { session: session.sessionId.slice(0, 8), error: String(error) });
  }
}
