/**
 * Serve one Generate call as an Anthropic response: JSON (collect, then answer) or SSE. A stream
 * waits briefly for the worker's cache decision so errors before the first byte stay proper HTTP
 * errors and the decision can ride in a header; after that, errors become an SSE `error` event.
 */
import type { PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { GenerateCall } from "../generate-call.ts";
import { jsonResponse } from "../http.ts";
import { TurnAssembler } from "./assembler.ts";
import { toApiError } from "./errors.ts";
import type { AnthropicStreamEvent } from "./events.ts";
import { MessageAccumulator } from "./render-json.ts";
import { encodeAnthropicError, encodeAnthropicEvent, SSE_HEADERS, SSE_PING } from "./sse.ts";

export interface TurnOptions {
  requestId: string;
  model: string;
  keepAliveMs: number;
  headerWaitMs: number;
  headers: Record<string, string>;
  waitUntil: (promise: Promise<unknown>) => void;
  /** Called exactly once when the call is over (record the turn if it stopped, else release). */
  onDone: (assembler: TurnAssembler) => Promise<void>;
}

export function cacheHeader(prompt: PromptProcessed): string {
  const miss = prompt.missReason || "none";
  return `decision=${prompt.decision || "unknown"}; miss=${miss}; cached=${prompt.cachedTokens}; prompt=${prompt.promptTokens}`;
}

export async function respondJson(call: GenerateCall, options: TurnOptions): Promise<Response> {
  const assembler = new TurnAssembler(options.model);
  const accumulator = new MessageAccumulator();
  let done = false;
  try {
    for (;;) {
      const event = await call.next();
      if (event === undefined) break;
      for (const out of assembler.push(event)) accumulator.push(out);
    }
    assembler.finish();
    const headers = { ...options.headers };
    if (assembler.prompt) headers["x-frontier-cache"] = cacheHeader(assembler.prompt);
    // The SessionDO learns about the turn before the client does, so its next request (which may
    // follow at once) finds the session's new frontier.
    done = true;
    await options.onDone(assembler);
    return jsonResponse(accumulator.result(), { headers });
  } finally {
    if (!assembler.stopped) call.cancel();
    if (!done) options.waitUntil(options.onDone(assembler));
  }
}

export async function respondStream(call: GenerateCall, options: TurnOptions): Promise<Response> {
  const assembler = new TurnAssembler(options.model);
  const head: AnthropicStreamEvent[] = [];
  try {
    const deadline = Date.now() + options.headerWaitMs;
    while (!assembler.prompt) {
      const event = await call.nextWithin(deadline - Date.now());
      if (event === "timeout") break;
      if (event === undefined) {
        assembler.finish();
        break;
      }
      for (const out of assembler.push(event)) if (out.type !== "ping") head.push(out);
    }
  } catch (error) {
    call.cancel();
    options.waitUntil(options.onDone(assembler));
    throw error;
  }
  const headers = { ...options.headers, ...SSE_HEADERS };
  if (assembler.prompt) headers["x-frontier-cache"] = cacheHeader(assembler.prompt);
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  options.waitUntil(pump(call, assembler, head, writable.getWriter(), options));
  return new Response(readable, { status: 200, headers });
}

async function pump(
  call: GenerateCall,
  assembler: TurnAssembler,
  head: AnthropicStreamEvent[],
  writer: WritableStreamDefaultWriter<Uint8Array>,
  options: TurnOptions,
): Promise<void> {
  const encoder = new TextEncoder();
  let clientGone = false;
  let recorded = false;
  const done = async (): Promise<void> => {
    if (recorded) return;
    recorded = true;
    await options.onDone(assembler);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const armKeepAlive = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => void write(SSE_PING).catch(() => undefined), options.keepAliveMs);
  };
  const write = async (text: string): Promise<void> => {
    if (clientGone) throw new Error("client gone");
    armKeepAlive();
    try {
      await writer.write(encoder.encode(text));
    } catch (error) {
      clientGone = true;
      call.cancel();
      throw error;
    }
  };
  try {
    armKeepAlive();
    for (const event of head) await write(encodeAnthropicEvent(event));
    while (!assembler.stopped) {
      const event = await call.next();
      if (event === undefined) {
        assembler.finish();
        break;
      }
      for (const out of assembler.push(event)) {
        // Record the turn in the SessionDO before the client sees message_stop (see respondJson).
        if (out.type === "message_stop") await done();
        await write(encodeAnthropicEvent(out));
      }
    }
  } catch (error) {
    if (!clientGone && !call.cancelled) {
      await write(encodeAnthropicError(toApiError(error), options.requestId)).catch(() => undefined);
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    await writer.close().catch(() => undefined);
    const ended = assembler.stopped && (await drain(call));
    if (!ended) call.cancel();
    await done();
  }
}

/** After `stop`, let the worker finish its stream (trailers) instead of cancelling it. True if it ended. */
async function drain(call: GenerateCall): Promise<boolean> {
  try {
    for (let i = 0; i < 16; i++) {
      const event = await call.nextWithin(2000);
      if (event === undefined) return true;
      if (event === "timeout") return false;
    }
  } catch {
    // the turn is complete; a late transport error does not matter
  }
  return false;
}
