/** Resolve a request to a SessionDO and its sticky worker (the pure ranking lives in routing.ts). */
import { newSessionId } from "../shared/ids.ts";
import { ApiError } from "./anthropic/errors.ts";
import type { EdgeConfig } from "./config.ts";
import type { Env } from "./env.ts";
import {
  cleanHint,
  hintSessionId,
  type IdCandidate,
  idCandidates,
  type RouteSource,
  type RoutingIds,
  verifyRoutingIds,
} from "./routing.ts";
import type { OpenArgs } from "./session-do.ts";

export interface ResolvedSession {
  sessionId: string;
  workerUrl: string;
  epoch: number;
  source: RouteSource;
}

export interface RouteRequest {
  tenant: string;
  requestId: string;
  /** The IDs the request carries (see collectRoutingIds and its Responses counterpart). */
  ids: RoutingIds;
  /** A session the request names outright (a verified `previous_response_id`); tried first. */
  pinned?: IdCandidate;
  /** A client's conversation key (`x-claude-code-session-id`, `prompt_cache_key`). */
  hint: string | null;
}

export async function resolveSession(env: Env, config: EdgeConfig, request: RouteRequest): Promise<ResolvedSession> {
  const { ids } = request;
  const verified = await verifyRoutingIds(config.idSecret, request.tenant, ids);
  const base = { tenant: request.tenant, requestId: request.requestId, workerUrls: config.workerUrls };
  const candidates = idCandidates(verified);
  if (request.pinned) candidates.unshift(request.pinned);
  for (const candidate of candidates) {
    const opened = await open(env, { ...base, sessionId: candidate.sessionId, mode: "existing" });
    if (opened.status === "ok") return { ...opened, source: candidate.source };
  }
  let preferredWorker: string | undefined;
  const hint = cleanHint(request.hint);
  if (hint !== undefined) {
    const sessionId = await hintSessionId(request.tenant, hint);
    const opened = await open(env, { ...base, sessionId, mode: "hint", firstTurn: ids.firstTurn });
    if (opened.status === "ok") return { ...opened, source: "hint" };
    if (opened.status === "branch") preferredWorker = opened.workerUrl;
  }
  const sessionId = newSessionId();
  const opened = await open(env, { ...base, sessionId, mode: "claim", preferredWorker });
  if (opened.status !== "ok") throw ApiError.internal("could not create a session");
  return { ...opened, source: preferredWorker === undefined ? "new" : "branch" };
}

function open(env: Env, args: OpenArgs) {
  return env.SESSIONS.getByName(args.sessionId).open(args);
}

/** Record a finished turn (releases the lease). Failures are logged, never surfaced to the client. */
export async function recordTurn(
  env: Env,
  session: ResolvedSession,
  turn: { tenant: string; requestId: string; messageId: string; toolUseIds: string[] },
): Promise<void> {
  try {
    await env.SESSIONS.getByName(session.sessionId).recordTurn(turn);
  } catch (error) {
    console.error("session record failed", { session: session.sessionId.slice(0, 8), error: String(error) });
  }
}

export async function releaseSession(
  env: Env,
  session: ResolvedSession,
  tenant: string,
  requestId: string,
): Promise<void> {
  try {
    await env.SESSIONS.getByName(session.sessionId).release({ tenant, requestId });
  } catch (error) {
    console.error("session release failed", { session: session.sessionId.slice(0, 8), error: String(error) });
  }
}
