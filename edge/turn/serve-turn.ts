/**
 * One turn on the session's worker, whatever the protocol: call Generate, render the events through
 * the protocol's TurnRenderer (JSON or SSE), log one line, and tell the SessionDO how the turn ended
 * (record the frontier when it stopped, else release the lease). Failover before the first byte is
 * transparent (serve-with-failover.ts). pipeline.ts is what calls it.
 */
import type { PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionWord, missWord } from "../../shared/cache-decision.ts";
import { signThinking } from "../../shared/thinking-signature.ts";
import { log } from "../core/log.ts";
import { tenantDataKey } from "../core/tenant-data-key.ts";
import type { RequestContext } from "../http/context.ts";
import type { RecentTurn } from "../metrics/edge-metrics-do.ts";
import { recordFailover, recordTurn as recordTurnMetrics } from "../metrics/record.ts";
import { notOfferedTools } from "../server-tools/not-offered.ts";
import { beginCreation } from "../session/new-session.ts";
import { type ResolvedSession, routeHeader, turnLogFields } from "../session/resolved-session.ts";
import { recordTurn, releaseSession } from "../session/session-record.ts";
import type { TurnAccount } from "../tenancy/admission.ts";
import type { Caller } from "../tenancy/auth.ts";
import { settledUsage } from "../tenancy/settled-usage.ts";
import { GenerateCall } from "../worker/generate-call.ts";
import { generateRequestFor, type WorkerTurn, withIdKeys } from "../worker/generate-request.ts";
import type { FailoverReason } from "../worker/worker-errors.ts";
import type { TurnBindings } from "./bindings.ts";
import { serveWithFailover } from "./serve-with-failover.ts";
import { respondJson, respondStream, type TurnOptions, type TurnRenderer } from "./turn-driver.ts";
import { markDownAfterFailure } from "./worker-down.ts";
import { workerCallHeaders } from "./worker-identity.ts";

export interface ServeTurnOptions<R extends TurnRenderer> {
  /** The log line's name: `${protocol} turn`. */
  protocol: string;
  caller: Caller;
  /** What the worker runs; joined with the session of each attempt. */
  turn: WorkerTurn;
  stream: boolean;
  /** Fingerprint of system + tools (placement on failover). */
  prefix: string | undefined;
  /** A renderer for one attempt on `session`. */
  renderer: (session: ResolvedSession) => R;
  /** Headers besides `x-frontier-route`, `x-frontier-cache` and `x-frontier-tools-not-offered`. */
  headers?: Record<string, string> | undefined;
  /** Declared tools the edge did not offer the model (the worker adds its own to the header). */
  toolsNotOffered: readonly string[];
  /** When a turn stopped, what must land before the client's final event (e.g. store the Responses record). */
  beforeFinal?: ((session: ResolvedSession, renderer: R) => Promise<void>) | undefined;
  /** The request's model (its usage record). */
  model: string;
  /** Where the turn's usage goes for its settlement with the tenant's authority. */
  account: TurnAccount;
}

export async function serveTurn<R extends TurnRenderer>(
  /** The client going away (a disconnect, a closed socket) cancels the call. */
  signal: AbortSignal,
  rc: RequestContext<TurnBindings>,
  routed: ResolvedSession,
  options: ServeTurnOptions<R>,
): Promise<Response> {
  const { env, config, requestId } = rc;
  const { tenant } = options.caller;
  rc.timing.mark("route");
  try {
    await rc.admitted; // the tenant's authority, asked while the session was resolved
  } catch (error) {
    await releaseSession(env, routed, tenant, requestId);
    throw error;
  }
  rc.timing.mark("admit");
  // A new session's SessionDO is written while the worker runs the turn (recordTurn waits for it).
  const resolved = beginCreation(env, config, routed);
  const attempt = async (session: ResolvedSession): Promise<Response> => {
    const tenantKey = await tenantDataKey(config.idSecret, tenant);
    const target = {
      requestId,
      tenantId: tenant,
      sessionId: session.sessionId,
      epoch: session.epoch,
      tenantDataKey: tenantKey,
    };
    const scope = { tenant, session: session.sessionId, ops: ["generate" as const] };
    const [headers, request] = await Promise.all([
      workerCallHeaders(env, config, session.workerUrl, scope),
      withIdKeys(config.idSecret, generateRequestFor(target, options.turn, options.prefix)),
    ]);
    const worker = {
      baseUrl: session.workerUrl,
      token: config.workerToken,
      headers,
      deadlines: config.workerDeadlines,
    };
    const sign = (thinking: string) => signThinking(config.idSecret, tenant, thinking);
    const call = new GenerateCall(worker, request, signal, sign);
    const started = Date.now();
    const turn: TurnOptions<R> = {
      requestId,
      keepAliveMs: config.keepAliveMs,
      headerWaitMs: config.headerWaitMs,
      headers: { ...options.headers, "x-frontier-route": routeHeader(session) },
      toolsNotOffered: options.toolsNotOffered,
      timing: rc.timing,
      sent: rc.sent,
      waitUntil: rc.waitUntil,
      onDone: (renderer) => finishTurn(rc, options, { session, resolved, call, renderer, started }),
      onStreamFailure: (error) => rc.waitUntil(markDownAfterFailure(env, config, session.workerUrl, error, requestId)),
    };
    const renderer = options.renderer(session);
    return options.stream ? respondStream(call, renderer, turn) : respondJson(call, renderer, turn);
  };
  const onFailover = (reason: FailoverReason) => rc.waitUntil(recordFailover(env, reason));
  return serveWithFailover(env, config, resolved, { tenant, requestId, prefix: options.prefix, onFailover }, attempt);
}

interface FinishedAttempt<R extends TurnRenderer> {
  session: ResolvedSession;
  /** The session as routing found it (its placement reason). */
  resolved: ResolvedSession;
  call: GenerateCall;
  renderer: R;
  started: number;
}

/**
 * The call is over: log the turn, queue its metrics and usage, and record the session's frontier (a
 * turn that did not stop releases the lease instead). Runs before the client's final event.
 */
async function finishTurn<R extends TurnRenderer>(
  rc: RequestContext<TurnBindings>,
  options: ServeTurnOptions<R>,
  attempt: FinishedAttempt<R>,
): Promise<void> {
  const { env, requestId } = rc;
  const { session, renderer, call } = attempt;
  const { tenant } = options.caller;
  const prompt = renderer.prompt;
  // What the authority settles once the client has the response (a turn cut short included).
  if (prompt)
    options.account.usage = settledUsage(options.model, prompt, call.stop, renderer.stopped, call.outputEvents);
  const notOffered = notOfferedTools(options.toolsNotOffered, prompt);
  log(`${options.protocol} turn`, {
    ...turnLogFields(session, requestId, prompt),
    ...(session.cached ? { route_cache: "hit" } : {}),
    stream: options.stream,
    ...(notOffered.length > 0 ? { not_offered: notOffered.join(",") } : {}),
    ...renderer.logFields(),
    ms: Date.now() - attempt.started,
  });
  if (prompt) {
    const summary = turnSummary(options.protocol, session, attempt.resolved, prompt);
    const seconds = (Date.now() - attempt.started) / 1000;
    recordTurnMetrics(env, rc.sent, summary, seconds);
  }
  if (!renderer.stopped || !prompt) {
    await releaseSession(env, session, tenant, requestId);
    return;
  }
  // The session's frontier is recorded after the client has the response, not before its final
  // event: a next request that names the session by a signed ID does not need the record, and
  // a hinted one that finds the lease still held waits for it (SessionDO HINT_FOLLOW_WAIT_MS).
  // What must exist before the final event: the session itself (a new one's creation, or the
  // record that creates it when that failed) and (Responses) the stored record a next request names.
  const record = () =>
    recordTurn(env, session, {
      tenant,
      requestId,
      messageId: prompt.messageId,
      toolUseIds: [...renderer.toolCallIds],
      prefix: options.prefix,
    });
  const exists = async () => {
    if (session.creating && !(await session.creating)) await record();
    else rc.sent.after(record);
  };
  await Promise.all([exists(), options.beforeFinal?.(session, renderer)]);
}

/** A finished turn for the edge metrics and the status page's latest turns. */
function turnSummary(
  protocol: string,
  session: ResolvedSession,
  resolved: ResolvedSession,
  prompt: PromptProcessed,
): RecentTurn {
  return {
    at: Date.now(),
    protocol,
    session: session.sessionId.slice(0, 8),
    decision: decisionWord(prompt.decision),
    miss: missWord(prompt.missReason),
    cached: prompt.cachedTokens,
    prompt: prompt.promptTokens,
    placement: resolved.placement ?? "none",
    failover: session.leaseId !== undefined,
  };
}
