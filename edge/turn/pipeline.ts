/**
 * The one turn pipeline under every protocol (Messages, Responses, Chat Completions). A protocol is
 * a `ProtocolAdapter`: it decodes a request body into the canonical turn (what the worker runs, the
 * IDs it carries, how to render the answer) and nothing else. The pipeline does the rest, in order:
 * identify the caller (headers only, before the body is read: a key the edge never issued is refused
 * there), read the bounded body (past its first MiB only once the tenant's authority would admit the
 * caller), decode, ask the authority to admit the turn with its upper bound (the one Durable Object
 * call a turn waits for besides its session's, and asked alongside it), fingerprint the prefix (once,
 * here), find the session, and serve the turn on its worker (serve-turn.ts: failover, rendering,
 * usage, records, metrics); the authority settles the turn's usage after the response. A transport
 * calls `runTurn` with a caller it identified, a parsed body and what stands for the client going
 * away; `turnRoute` is the HTTP/SSE transport. The adapters never see which.
 */
import { LIMITS } from "../../shared/limits.ts";
import { prefixChain } from "../../shared/prefix-chain.ts";
import { prefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { log } from "../core/log.ts";
import { readJsonBody } from "../http/body.ts";
import type { RequestContext } from "../http/context.ts";
import type { ResolvedSession } from "../session/resolved-session.ts";
import type { RouteCache } from "../session/route-cache.ts";
import type { IdCandidate, RoutingIds } from "../session/routing.ts";
import { resolveSession } from "../session/session-route.ts";
import { admissionGate, admitTurn, type TurnAccount } from "../tenancy/admission.ts";
import { type Caller, type CallerIdentifier, identifyRequestCaller } from "../tenancy/auth.ts";
import { turnDemand } from "../tenancy/turn-demand.ts";
import type { WorkerTurn } from "../worker/generate-request.ts";
import { isStaleEpoch } from "../worker/worker-errors.ts";
import type { TurnBindings } from "./bindings.ts";
import { serveTurn } from "./serve-turn.ts";
import type { TurnRenderer } from "./turn-driver.ts";

/** The log line's and the metrics' name of a protocol. */
export type TurnProtocol = "anthropic" | "responses" | "chat" | "gemini";

/** What an adapter may look at while it decodes. */
export interface DecodeContext<E> {
  /** The client's headers (hints: `x-claude-code-session-id`, `session-id`, …). */
  headers: Headers;
  rc: RequestContext<E>;
  caller: Caller;
}

/** One request in canonical form: what the pipeline needs from a protocol. */
export interface DecodedTurn<R extends TurnRenderer> {
  /** The model the request names (the key's allow-list, the price of its reservation). */
  model: string;
  turn: WorkerTurn;
  /** The IDs the request carries (tool results, replayed calls), for routing. */
  ids: RoutingIds;
  /** A session the request names outright (a verified `previous_response_id`). */
  pinned?: IdCandidate | undefined;
  /** The client's placement hint (`prompt_cache_key`, a session header). */
  hint: string | null;
  stream: boolean;
  /** Declared tools the edge will not offer the model (`x-frontier-tools-not-offered`). */
  toolsNotOffered: readonly string[];
  /** The protocol's own response headers (e.g. `x-request-id`). */
  headers?: Record<string, string>;
  /** The renderer of one attempt on `session` (a failover renders afresh). */
  renderer: (session: ResolvedSession) => R;
  /**
   * A protocol's own check that must pass before the worker is called (a stored-record quota): it
   * runs alongside admission and routing and fails the turn like a refusal.
   */
  checks?: Promise<void> | undefined;
  /** What must land before the client's final event when the turn stopped. */
  beforeFinal?: (session: ResolvedSession, renderer: R) => Promise<void>;
}

export interface ProtocolAdapter<E extends TurnBindings, R extends TurnRenderer> {
  readonly protocol: TurnProtocol;
  /** A validated, decoded turn, or an `ApiError` (400 naming the field, 404 for an unknown ID). */
  decode(body: unknown, context: DecodeContext<E>): Promise<DecodedTurn<R>>;
}

/** What a transport hands the pipeline for one turn. */
export interface TurnRequest<E> {
  rc: RequestContext<E>;
  caller: Caller;
  headers: Headers;
  /** The parsed request body (a `response.create` event's, over a socket). */
  body: unknown;
  /** Aborts when the client goes away: the worker call is cancelled. */
  signal: AbortSignal;
  /** The route a connection keeps for its session (a WebSocket lane's pin; RouteRequest.pin). */
  pin?: RouteCache | undefined;
}

/** One turn through the pipeline, whatever carried it: the protocol's JSON or SSE response. */
export async function runTurn<E extends TurnBindings, R extends TurnRenderer>(
  adapter: ProtocolAdapter<E, R>,
  { rc: plain, caller, headers, body, signal, pin }: TurnRequest<E>,
): Promise<Response> {
  const decoded = await adapter.decode(body, { headers, rc: plain, caller });
  const account: TurnAccount = {};
  decoded.checks?.catch(() => undefined); // awaited below, after admission
  const admission = admitTurn(plain, caller, turnDemand(decoded.model, decoded.turn), account);
  const admitted = decoded.checks ? admission.then(() => decoded.checks) : admission;
  admitted.catch(() => undefined); // awaited before the worker call; this only keeps it from counting as unhandled
  const rc = { ...plain, admitted };
  try {
    return await routeAndServe(adapter, { rc, caller, signal, pin }, decoded, account);
  } catch (error) {
    // A refusal wins over whatever else the request became (no worker, a stale route, …).
    const refused = await admitted.then(
      () => undefined,
      (refusal: unknown) => refusal,
    );
    throw refused ?? error;
  }
}

async function routeAndServe<E extends TurnBindings, R extends TurnRenderer>(
  adapter: ProtocolAdapter<E, R>,
  { rc, caller, signal, pin }: Omit<TurnRequest<E>, "headers" | "body">,
  decoded: DecodedTurn<R>,
  account: TurnAccount,
): Promise<Response> {
  const prefix = await prefixFingerprint(caller.tenant, decoded.turn.conversation);
  let chain: Promise<string[]> | undefined;
  const prefixChainOnce = () => {
    chain ??= prefixChain(caller.tenant, decoded.turn.conversation);
    return chain;
  };
  const route = (noCache: boolean) =>
    resolveSession(rc.env, rc.config, {
      tenant: caller.tenant,
      requestId: rc.requestId,
      ids: decoded.ids,
      pinned: decoded.pinned,
      hint: decoded.hint,
      prefix,
      chain: prefixChainOnce,
      admitted: rc.admitted,
      noCache,
      ...(pin && { pin }),
    });
  const options = { ...decoded, protocol: adapter.protocol, caller, prefix, account };
  const routed = await route(false);
  try {
    return await serveTurn(signal, rc, routed, options);
  } catch (error) {
    // A cached or pinned route the worker refused as stale (the session moved): ask the SessionDO, once.
    if (!routed.cached || !isStaleEpoch(error)) throw error;
    log("route cache stale", { request: rc.requestId, session: routed.sessionId.slice(0, 8), epoch: routed.epoch });
    return serveTurn(signal, rc, await route(true), options);
  }
}

/** The HTTP/SSE transport: a route handler that runs `adapter`'s protocol through the pipeline. */
export function turnRoute<E extends TurnBindings, R extends TurnRenderer>(
  adapter: ProtocolAdapter<E, R>,
  identify: CallerIdentifier = identifyRequestCaller,
) {
  return async (request: Request, rc: RequestContext<E>): Promise<Response> => {
    const caller = await identify(request, rc.config);
    const body = await readJsonBody(request, LIMITS.maxBodyBytes, admissionGate(rc, caller));
    return runTurn(adapter, { rc, caller, headers: request.headers, body, signal: request.signal });
  };
}
