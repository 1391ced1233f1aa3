/**
 * A Codex-like Responses client over WebSocket, on the openai SDK's `ResponsesWS`: one socket per
 * conversation, each turn one `response.create` (`store: false`: the socket remembers the history;
 * follow-ups carry `previous_response_id` and only the `function_call_output` items; on a new socket,
 * which remembers nothing, the client replays the whole conversation's items instead). A socket turn
 * has no HTTP status: a refusal arrives as an `error` event with a `status`, and the client retries
 * it with the SDKs' own backoff (0.5 s doubling to 8 s, jittered), at most `maxRetries` times. To
 * abort a turn the client closes the socket (a socket has no per-turn cancel); the next send opens a
 * new one.
 */
import OpenAI from "openai";
import type {
  ResponseInputItem,
  ResponsesClientEvent,
  ResponsesServerEvent,
} from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import {
  type ConversationSetup,
  type LoadConversation,
  type TurnControl,
  TurnFailure,
  type TurnInput,
  type TurnReply,
} from "../load-turn.ts";
import { inputItems, ResponseTurnReader, responsesBody } from "./responses-conversation.ts";

/** Statuses the SDKs retry (timeout, conflict, rate limited, server errors, overloaded). */
const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

export class SocketConversation implements LoadConversation {
  readonly protocol = "responses-ws";
  readonly #client: OpenAI;
  #ws: ResponsesWS | undefined;
  /** The last completed response and the socket that served it (only that socket remembers it). */
  #previous: { id: string; socket: ResponsesWS } | undefined;
  /** Every item so far (inputs and the calls made), replayed on a new socket. */
  readonly #items: ResponseInputItem[] = [];

  constructor(private readonly setup: ConversationSetup) {
    this.#client = new OpenAI({ baseURL: `${setup.edgeUrl}/v1`, apiKey: setup.apiKey, maxRetries: 0 });
  }

  async send(input: TurnInput, control: TurnControl): Promise<TurnReply> {
    const added = inputItems(input);
    for (let attempt = 0; ; attempt++) {
      const ws = this.#socket();
      const continued = this.#previous?.socket === ws ? this.#previous.id : undefined;
      const { stream: _stream, ...body } = responsesBody(
        this.setup,
        continued === undefined ? [...this.#items, ...added] : added,
        continued,
        false,
      );
      const outcome = await this.#attempt(
        ws,
        { type: "response.create", ...body } as ResponsesClientEvent,
        control,
      ).catch((error: unknown) => {
        // A socket that closed (or never opened) is reopened by the next attempt, as a client reconnects.
        if (error instanceof TurnFailure && error.reason === "connection" && attempt < this.setup.maxRetries)
          return { kind: "reconnect" as const, status: 0, detail: error.message };
        throw error;
      });
      if (outcome.kind === "reconnect") {
        await sleep(Math.min(500 * 2 ** attempt, 8000), control.signal);
        continue;
      }
      if (outcome.kind === "done") {
        this.#previous = { id: outcome.reply.id, socket: ws };
        this.#items.push(
          ...added,
          ...outcome.reply.calls.map((c) => ({
            type: "function_call" as const,
            call_id: c.id,
            name: c.name,
            arguments: c.arguments,
          })),
        );
        return { ...outcome.reply, decision: undefined };
      }
      if (!RETRYABLE.has(outcome.status) || attempt >= this.setup.maxRetries) {
        throw new TurnFailure(`HTTP ${outcome.status}`, `socket error event: ${outcome.detail}`);
      }
      const delayMs = Math.min(500 * 2 ** attempt, 8000) * (1 - Math.random() * 0.25);
      await sleep(delayMs, control.signal);
    }
  }

  #socket(): ResponsesWS {
    if (this.#ws) return this.#ws;
    const ws = new ResponsesWS(this.#client);
    // Errors are read per turn (below); this keeps an unanswered socket error from being thrown.
    ws.on("error", () => {});
    ws.on("close", () => {
      if (this.#ws === ws) this.#ws = undefined;
    });
    this.#ws = ws;
    return ws;
  }

  #drop(): void {
    this.#ws?.close({ code: 1000, reason: "client abort" });
    this.#ws = undefined;
  }

  #attempt(
    ws: ResponsesWS,
    event: ResponsesClientEvent,
    control: TurnControl,
  ): Promise<
    | { kind: "done"; reply: Omit<TurnReply, "decision"> & { id: string } }
    | { kind: "refused"; status: number; detail: string }
  > {
    const reader = new ResponseTurnReader(control);
    return new Promise((resolve, reject) => {
      const finish = () => {
        ws.off("event", onEvent);
        ws.off("close", onClose);
        control.signal.removeEventListener("abort", onAbort);
      };
      const onEvent = (e: ResponsesServerEvent) => {
        const raw = e as unknown as { type: string; status?: number } & Record<string, unknown>;
        try {
          if (raw.type === "error" && typeof raw.status === "number") {
            control.onStatus(raw.status);
            finish();
            resolve({ kind: "refused", status: raw.status, detail: JSON.stringify(raw.error ?? raw).slice(0, 300) });
            return;
          }
          const reply = reader.push(raw);
          if (reply) {
            finish();
            resolve({ kind: "done", reply });
          }
        } catch (error) {
          finish();
          reject(error);
        }
      };
      const onClose = (code: number) => {
        finish();
        if (this.#ws === ws) this.#ws = undefined;
        reject(new TurnFailure("connection", `the socket closed mid-turn (${code})`));
      };
      const onAbort = () => {
        finish();
        this.#drop();
        reject(new TurnFailure("aborted", "the client closed the socket"));
      };
      if (control.signal.aborted) return onAbort();
      ws.on("event", onEvent);
      ws.on("close", onClose);
      control.signal.addEventListener("abort", onAbort, { once: true });
      ws.send(event);
    });
  }

  close(): void {
    this.#drop();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new TurnFailure("aborted", "gave up while waiting to retry"));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}
