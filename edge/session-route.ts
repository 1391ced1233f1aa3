/** Resolve a request to a SessionDO and its sticky worker (the pure ranking lives in routing.ts). */
import { newSessionId } from "../shared/ids.ts";
import { ApiError } from "./anthropic/errors.ts";
import type { InputMessage } from "./anthropic/types.ts";
import type { EdgeConfig } from "./config.ts";
import type { Env } from "./env.ts";
import {
  cleanHint,
  collectRoutingIds,
  hintSessionId,
  idCandidates,
  type RouteSource,
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
  messages: readonly InputMessage[];
  /** The `x-claude-code-session-id` header. */
  hint: string | null;
}

export async function resolveSession(env: Env, config: EdgeConfig, request: RouteRequest): Promise<ResolvedSession> {
  const ids = collectRoutingIds(request.messages);
  const verified = await verifyRoutingIds(config.idSecret, request.tenant, ids);
  const base = { tenant: request.tenant, requestId: request.requestId, workerUrls: config.workerUrls };
  for (const candidate of idCandidates(verified)) {
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
