/**
 * The one turn pipeline under every protocol (Messages, Responses, Chat Completions). A protocol is
 * a `ProtocolAdapter`: it decodes a request body into the canonical turn (what the worker runs, the
 * IDs it carries, how to render the answer) and nothing else. The pipeline does the rest, in order:
 * authenticate (headers only, before the body is read) and ask the tenant's limiter, read the
 * bounded body, decode, fingerprint the prefix (once, here), find the session, and serve the turn on
 * its worker (serve-turn.ts: failover, rendering, usage, records, metrics). A transport calls
 * `runTurn` with a caller it authenticated, a parsed body and what stands for the client going away;
 * `turnRoute` is the HTTP/SSE transport. The adapters never see which.
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
import type { Caller } from "../tenancy/auth.ts";
import { type Authenticator, tenantLimited } from "../tenancy/tenant-admission.ts";
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
  { rc, caller, headers, body, signal, pin }: TurnRequest<E>,
): Promise<Response> {
  const decoded = await adapter.decode(body, { headers, rc, caller });
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
  const options = { ...decoded, protocol: adapter.protocol, caller, prefix };
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

/**
 * Past this many bytes (declared, or read so far) a body is read on only once the tenant's limiter
 * has admitted the request: a refused tenant never makes the edge read and parse megabytes. Smaller
 * bodies are read while the limiter answers.
 */
const READ_AFTER_ADMISSION_BYTES = 1 << 20;

/** The HTTP/SSE transport: a route handler that runs `adapter`'s protocol through the pipeline. */
export function turnRoute<E extends TurnBindings, R extends TurnRenderer>(
  adapter: ProtocolAdapter<E, R>,
  authenticate?: Authenticator,
) {
  return tenantLimited<E>(async (request, rc, caller) => {
    const admitted = async () => rc.admitted;
    const body = await readJsonBody(request, LIMITS.maxBodyBytes, {
      after: READ_AFTER_ADMISSION_BYTES,
      wait: admitted,
    });
    return runTurn(adapter, { rc, caller, headers: request.headers, body, signal: request.signal });
  }, authenticate);
}
