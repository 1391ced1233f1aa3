/**
 * Responses over WebSocket (`GET /v1/responses` with `Upgrade: websocket`, OpenAI's "WebSocket
 * mode"): one long-lived socket per caller, authenticated from the upgrade's headers (a 401 before
 * any upgrade) and again by every turn's admission: a key revoked while the socket is open is
 * refused on its next turn. Each `response.create` event is a turn through the same pipeline and adapter
 * as `POST /v1/responses` (its body is the create body minus `stream`/`background`); the SSE events
 * it yields go out as one JSON text message each. The socket remembers the responses made on it
 * (SocketMemory), so follow-ups send only new items with `previous_response_id`, `store: false`
 * included. `stream_id` names a lane: a lane's turns run in order, lanes run side by side, and a
 * lane's events echo its `stream_id`. Each lane is pinned to its session's route once a turn on it
 * is recorded (LanePins): its follow-ups reach the worker with no SessionDO lookup, whatever else
 * the isolate's route cache holds. A `generate: false` turn is a warm-up: it answers at once and
 * only remembers its input. Closing the socket cancels its turns on the workers.
 */
import { LIMITS } from "../../../../shared/limits.ts";
import { ApiError, toApiError } from "../../../core/errors.ts";
import { log } from "../../../core/log.ts";
import { ResponseSent } from "../../../core/response-sent.ts";
import { EdgeTiming } from "../../../core/timing.ts";
import { newRequestId } from "../../../http/body.ts";
import { authorize } from "../../../tenancy/admission.ts";
import { type Caller, identifyCaller } from "../../../tenancy/auth.ts";
import { runTurn } from "../../../turn/pipeline.ts";
import { openAiErrorBody } from "../../openai/errors.ts";
import { type ResponsesContext, responsesAdapterWith } from "../adapter.ts";
import { warmUp } from "../warm-up.ts";
import { socketEvents } from "./socket-events.ts";
import { SocketMemory } from "./socket-memory.ts";
import { LanePins } from "./socket-pins.ts";

/** The upgrade: 401 (in OpenAI's shape) before anything is accepted, 426 without `Upgrade: websocket`. */
export async function handleResponsesSocket(request: Request, rc: ResponsesContext): Promise<Response> {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError("invalid_request_error", "GET /v1/responses is the WebSocket mode: send Upgrade: websocket", {
      status: 426,
      headers: { upgrade: "websocket" },
    });
  }
  const caller = await identifyCaller(request.headers, rc.config);
  await authorize(rc, caller);
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  new ResponsesSocket(server, rc, caller, request.headers, SOCKET_LIMITS).listen();
  return new Response(null, { status: 101, webSocket: client, headers: { "x-request-id": rc.requestId } });
}

/** Per-socket limits, besides the request limits every turn has (body size, tenant limits). */
export interface SocketLimits {
  /** Lanes (`stream_id`s) with turns queued or running at once. */
  lanes: number;
  /** Turns queued on one lane, the running one included. */
  queuedPerLane: number;
  /** A socket with no turn running and no client event for this long is closed. */
  idleMs: number;
  /** A socket is closed this long after it opened (once its turns are done); the client reconnects. */
  maxAgeMs: number;
}

export const SOCKET_LIMITS: SocketLimits = { lanes: 8, queuedPerLane: 8, idleMs: 10 * 60_000, maxAgeMs: 60 * 60_000 };

/** One client event, as far as the socket needs to read it before the adapter validates the rest. */
interface ClientEvent {
  type: string;
  stream_id?: unknown;
  [field: string]: unknown;
}

export class ResponsesSocket {
  readonly #memory = new SocketMemory();
  readonly #adapter = responsesAdapterWith(this.#memory);
  readonly #pins: LanePins;
  /** Each lane's last queued turn (the next one starts when it settles) and how many it holds. */
  readonly #lanes = new Map<string, { tail: Promise<void>; queued: number }>();
  readonly #closed = new AbortController();
  readonly #openedAt = Date.now();
  #idleTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly rc: ResponsesContext,
    private readonly caller: Caller,
    private readonly headers: Headers,
    private readonly limits: SocketLimits,
  ) {
    this.#pins = new LanePins(limits.maxAgeMs);
  }

  listen(): void {
    this.#armIdle();
    this.socket.addEventListener("message", (message) => {
      this.#armIdle();
      this.#receive(message.data);
    });
    const close = () => this.#closed.abort(new Error("socket closed"));
    this.socket.addEventListener("close", () => {
      close();
      // Answer the client's close frame, or the runtime holds the connection open as hung.
      try {
        this.socket.close(1000, "closed");
      } catch {
        // already closed
      }
    });
    this.socket.addEventListener("error", close);
  }

  /** Close the socket once nothing runs and nothing arrives for `idleMs` (or past `maxAgeMs`). */
  #armIdle(): void {
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    if (this.#closed.signal.aborted) return;
    const aged = Date.now() - this.#openedAt >= this.limits.maxAgeMs;
    const wait = aged ? 0 : Math.min(this.limits.idleMs, this.limits.maxAgeMs - (Date.now() - this.#openedAt));
    this.#idleTimer = setTimeout(() => {
      if (this.#lanes.size > 0) return; // a turn's end re-arms the timer
      const old = Date.now() - this.#openedAt >= this.limits.maxAgeMs;
      this.#end(old ? "connection age limit reached: reconnect to continue" : "idle");
    }, wait);
  }

  #end(reason: string): void {
    this.#closed.abort(new Error(reason));
    try {
      this.socket.close(1000, reason);
    } catch {
      // already closed
    }
  }

  #receive(data: string | ArrayBuffer): void {
    let event: ClientEvent;
    try {
      event = parseClientEvent(data);
    } catch (error) {
      this.#sendError(toApiError(error, { requestId: this.rc.requestId, path: "/v1/responses" }), undefined);
      return;
    }
    const lane = typeof event.stream_id === "string" ? event.stream_id : undefined;
    switch (event.type) {
      case "response.create": {
        const refused = this.#enqueue(lane ?? "", () => this.#create(event, lane));
        if (refused) this.#sendError(refused, lane);
        return;
      }
      case "response.processed":
        return; // the client read a response: nothing to release here
      default:
        this.#sendError(
          ApiError.invalid(
            event.type === "response.steer"
              ? "response.steer is not supported by this server: send the input in the next response.create"
              : `Unknown client event type '${event.type}': expected response.create`,
          ),
          lane,
        );
    }
  }

  /** Queue a turn on its lane, or refuse it (429) past the socket's lane or queue limits. */
  #enqueue(lane: string, turn: () => Promise<void>): ApiError | undefined {
    const known = this.#lanes.get(lane);
    if (!known && this.#lanes.size >= this.limits.lanes)
      return busy(`more than ${this.limits.lanes} stream_id lanes are busy on this socket`);
    if (known && known.queued >= this.limits.queuedPerLane)
      return busy(`more than ${this.limits.queuedPerLane} responses are queued on this lane`);
    const entry = known ?? { tail: Promise.resolve(), queued: 0 };
    entry.queued++;
    const next = entry.tail
      .then(turn)
      .catch((error: unknown) => log("socket turn failed", { error: String(error) }))
      .finally(() => {
        entry.queued--;
        if (entry.queued === 0) this.#lanes.delete(lane);
        this.#armIdle();
      });
    entry.tail = next;
    this.#lanes.set(lane, entry);
    return undefined;
  }

  async #create(event: ClientEvent, lane: string | undefined): Promise<void> {
    if (this.#closed.signal.aborted) return;
    const { type: _type, stream_id: _lane, background, generate, ...body } = event;
    const requestId = newRequestId();
    const rc = {
      ...this.rc,
      requestId,
      timing: new EdgeTiming(),
      sent: new ResponseSent(this.rc.waitUntil),
      rateLimits: {},
    };
    try {
      if (background === true) throw ApiError.invalid("background is not supported over WebSocket");
      if (generate === false) {
        await authorize(rc, this.caller);
        for (const message of await warmUp(body, rc, this.caller.tenant, this.#memory)) this.#send(message, lane);
        return;
      }
      const pin = this.#pins.of(lane ?? "");
      const records = pin.records;
      const response = await runTurn(this.#adapter, {
        rc,
        caller: this.caller,
        headers: this.headers,
        body: { ...body, stream: true },
        signal: this.#closed.signal,
        pin,
      });
      rc.sent.returned();
      // A turn that stopped is recorded just after its last event: the lane's next turn waits for
      // that record (bounded), so it finds the lane pinned however fast the client answers.
      if (await this.#forward(response, lane)) await pin.recordedAfter(records);
    } catch (error) {
      rc.sent.done();
      this.#sendError(toApiError(error, { requestId, path: "/v1/responses" }), lane);
    }
  }

  /** A turn's response onto the socket: its SSE events one message each, or its error. True when the turn stopped. */
  async #forward(response: Response, lane: string | undefined): Promise<boolean> {
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => ({}))) as { error?: unknown };
      this.#sendJson({ type: "error", status: response.status, error: body.error ?? null }, lane);
      return false;
    }
    let last: string | undefined;
    for await (const data of socketEvents(response.body)) {
      this.#send(data, lane);
      last = data;
    }
    return !this.#closed.signal.aborted && last !== undefined && STOPPED.has(eventType(last));
  }

  #sendError(error: ApiError, lane: string | undefined): void {
    this.#sendJson({ type: "error", status: error.status, error: openAiErrorBody(error).error }, lane);
  }

  #sendJson(message: Record<string, unknown>, lane: string | undefined): void {
    this.#send(JSON.stringify(message), lane);
  }

  /** One server event (its JSON text); a lane's events carry its `stream_id`. */
  #send(json: string, lane: string | undefined): void {
    if (this.#closed.signal.aborted) return;
    const text = lane === undefined ? json : withStreamId(json, lane);
    try {
      this.socket.send(text);
    } catch {
      this.#closed.abort(new Error("socket closed"));
    }
  }
}

/** The final events of a turn that stopped (the worker's stop event: the turn is recorded). */
const STOPPED: ReadonlySet<unknown> = new Set(["response.completed", "response.incomplete"]);

function eventType(json: string): unknown {
  try {
    return (JSON.parse(json) as { type?: unknown }).type;
  } catch {
    return undefined;
  }
}

function busy(message: string): ApiError {
  return new ApiError("rate_limit_error", message, { code: "rate_limit_exceeded", retryAfter: 1 });
}

function parseClientEvent(data: string | ArrayBuffer): ClientEvent {
  if (typeof data !== "string") throw ApiError.invalid("Client events are JSON text messages, not binary");
  if (data.length > LIMITS.maxBodyBytes) throw ApiError.tooLarge(LIMITS.maxBodyBytes);
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    throw ApiError.invalid("A client event must be a JSON object");
  }
  if (typeof event !== "object" || event === null || Array.isArray(event))
    throw ApiError.invalid("A client event must be a JSON object");
  const type = (event as { type?: unknown }).type;
  if (typeof type !== "string") throw new ApiError("invalid_request_error", "type: Field required", { param: "type" });
  return event as ClientEvent;
}

/** `{…}` with `"stream_id": lane` added last (server events are JSON objects; parsing each token's event again is not needed). */
function withStreamId(json: string, lane: string): string {
  const tail = json.lastIndexOf("}");
  if (!json.startsWith("{") || tail < 1) return json;
  const empty = json.slice(1, tail).trim() === "";
  return `${json.slice(0, tail)}${empty ? "" : ","}"stream_id":${JSON.stringify(lane)}}`;
}
