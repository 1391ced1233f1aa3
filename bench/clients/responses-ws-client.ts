/**
 * The two transports of one Responses turn, measured the same way for the WebSocket vs HTTP bench:
 * `httpTurn` (POST /v1/responses, SSE) and `SocketClient.turn` (one `response.create` on a long-lived
 * socket through the openai SDK's `ResponsesWS`). Each reports the bytes the client sent for the
 * turn, the client-observed times (first output item, completion) and the usage; HTTP also its
 * `server-timing` steps (a socket turn has no headers).
 */
import OpenAI from "openai";
import type { ResponsesClientEvent, ResponsesServerEvent } from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import { parseServerTiming } from "../../edge/core/timing.ts";
import { decodeSseStream } from "../../test/support/sse-decoder.ts";
import { BENCH_KEY } from "./edge-client.ts";

export interface TransportTurn {
  id: string;
  /** Bytes the client sent for this turn: HTTP its request line, headers and body; WebSocket its message. */
  bytesSent: number;
  /** Send → the first `response.output_item.added`. */
  firstItemMs: number;
  /** Send → `response.completed` / `response.incomplete`. */
  ms: number;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  calls: { call_id: string; name: string; arguments: string }[];
  /** HTTP only: the edge's `server-timing` steps (route, admit, worker, total). */
  serverTiming?: Record<string, number>;
}

const encoder = new TextEncoder();

function emptyTurn(bytesSent: number): TransportTurn {
  return {
    id: "",
    bytesSent,
    firstItemMs: Number.NaN,
    ms: Number.NaN,
    inputTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    calls: [],
  };
}

/** Fold one server event into the turn; true once the turn is over. */
function accumulate(turn: TransportTurn, type: string, data: Record<string, unknown>, elapsed: number): boolean {
  if (type === "response.output_item.added" && Number.isNaN(turn.firstItemMs)) turn.firstItemMs = elapsed;
  else if (type === "response.output_item.done") {
    const item = data.item as { type: string; call_id: string; name: string; arguments: string };
    if (item.type === "function_call") turn.calls.push(item);
  } else if (type === "response.completed" || type === "response.incomplete") {
    const response = data.response as {
      id: string;
      usage: { input_tokens: number; output_tokens: number; input_tokens_details: { cached_tokens: number } };
    };
    turn.id = response.id;
    turn.inputTokens = response.usage.input_tokens;
    turn.cachedTokens = response.usage.input_tokens_details.cached_tokens;
    turn.outputTokens = response.usage.output_tokens;
    turn.ms = elapsed;
    return true;
  } else if (type === "error" || type === "response.failed") {
    throw new Error(`turn failed: ${JSON.stringify(data)}`);
  }
  return false;
}

/** One streamed POST /v1/responses; bytes = request line + the headers fetch sends + body. */
export async function httpTurn(edgeUrl: string, body: object): Promise<TransportTurn> {
  const url = new URL(`${edgeUrl}/v1/responses`);
  const json = JSON.stringify({ ...body, stream: true });
  const headers = { "content-type": "application/json", authorization: `Bearer ${BENCH_KEY}` };
  const bodyBytes = encoder.encode(json).length;
  // What undici adds besides ours (host, connection, content-length, accept, accept-language,
  // sec-fetch-mode, user-agent, accept-encoding): counted as sent, values as Node writes them.
  const implicit = {
    host: url.host,
    connection: "keep-alive",
    "content-length": String(bodyBytes),
    accept: "*/*",
    "accept-language": "*",
    "sec-fetch-mode": "cors",
    "user-agent": "node",
    "accept-encoding": "gzip, deflate",
  };
  const head = `POST ${url.pathname} HTTP/1.1\r\n${Object.entries({ ...implicit, ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;
  const started = performance.now();
  const res = await fetch(url, { method: "POST", headers, body: json });
  if (res.status !== 200 || !res.body) throw new Error(`edge answered ${res.status}: ${await res.text()}`);
  const turn = emptyTurn(encoder.encode(head).length + bodyBytes);
  turn.serverTiming = parseServerTiming(res.headers.get("server-timing"));
  for await (const event of decodeSseStream(res.body)) {
    const data = JSON.parse(event.data) as Record<string, unknown>;
    if (accumulate(turn, event.event ?? String(data.type), data, performance.now() - started)) break;
  }
  return turn;
}

/** A socket's WebSocket frame header for a client (masked) text message of `n` bytes. */
function frameHeaderBytes(n: number): number {
  return (n < 126 ? 2 : n < 65_536 ? 4 : 10) + 4;
}

/** One long-lived Responses socket; turns are sent one at a time (no lanes). */
export class SocketClient {
  readonly #ws: ResponsesWS;
  #pending: { turn: TransportTurn; started: number; done: () => void; fail: (e: Error) => void } | undefined;
  /** The upgrade request's bytes are paid once per socket, not per turn. */
  readonly opened: Promise<void>;

  constructor(edgeUrl: string) {
    const client = new OpenAI({ baseURL: `${edgeUrl}/v1`, apiKey: BENCH_KEY, maxRetries: 0 });
    this.#ws = new ResponsesWS(client);
    this.opened = new Promise((resolve, reject) => {
      this.#ws.socket.on("open", () => resolve());
      this.#ws.on("error", (error) => {
        reject(error);
        this.#pending?.fail(error);
      });
      // A socket that closes mid-turn (an edge restart) fails the turn instead of leaving it waiting.
      this.#ws.on("close", (code, reason) => {
        const closed = new Error(`socket closed (${code} ${reason})`);
        reject(closed);
        this.#pending?.fail(closed);
      });
    });
    this.#ws.on("event", (event: ResponsesServerEvent) => {
      const pending = this.#pending;
      if (!pending) return;
      try {
        const over = accumulate(
          pending.turn,
          event.type,
          event as unknown as Record<string, unknown>,
          performance.now() - pending.started,
        );
        if (over) pending.done();
      } catch (error) {
        pending.fail(error as Error);
      }
    });
  }

  async turn(body: object): Promise<TransportTurn> {
    await this.opened;
    const event = { type: "response.create", ...body } as ResponsesClientEvent;
    const bytes = encoder.encode(JSON.stringify(event)).length;
    const turn = emptyTurn(bytes + frameHeaderBytes(bytes));
    await new Promise<void>((resolve, reject) => {
      const settle = (fn: () => void) => () => {
        this.#pending = undefined;
        fn();
      };
      this.#pending = {
        turn,
        started: performance.now(),
        done: settle(resolve),
        fail: (e) => settle(() => reject(e))(),
      };
      this.#ws.send(event);
    });
    return turn;
  }

  close(): void {
    this.#ws.close({ code: 1000, reason: "bench done" });
  }
}
