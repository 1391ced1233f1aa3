/**
 * Serve one Generate call as an HTTP response in either protocol: JSON (collect, then answer) or
 * SSE. A stream waits for the worker to answer at all (bounded by the call's connect deadline, so a
 * worker that never takes the request fails over before the client has a byte), then briefly for
 * its cache decision, so errors before the first byte stay proper HTTP errors and the decision can
 * ride in a header; after that, errors become the protocol's in-stream error. The protocol
 * specifics live behind TurnRenderer.
 */
import type { GenerateEvent, PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type ApiError, toApiError } from "../core/errors.ts";
import type { ResponseSent } from "../core/response-sent.ts";
import type { EdgeTiming } from "../core/timing.ts";
import { jsonResponse } from "../http/body.ts";
import { withNotOffered } from "../server-tools/not-offered.ts";
import { cacheHeader } from "../worker/cache-decision.ts";
import type { GenerateCall } from "../worker/generate-call.ts";
import { SseWriter } from "./sse-writer.ts";

/** SSE text for one rendered event. */
export interface RenderedEvent {
  sse: string;
  /** A keep-alive (not worth holding back before the headers). */
  ping?: boolean;
  /** The event that tells the client the turn is over: written after `onDone` settles. */
  final?: boolean;
}

/** One turn in one protocol: worker events in, SSE events and the JSON body out. */
export interface TurnRenderer {
  readonly prompt: PromptProcessed | undefined;
  readonly stopped: boolean;
  /** IDs of the tool calls the turn made, in order (the session's new frontier). */
  readonly toolCallIds: readonly string[];
  /** Protocol-specific fields of the turn's log line. */
  logFields(): Record<string, unknown>;
  /** Feed one worker event. Throws an ApiError for a worker error event or a protocol violation. */
  push(event: GenerateEvent): RenderedEvent[] | Promise<RenderedEvent[]>;
  /** The worker's stream ended; throws unless the turn stopped. */
  finish(): void;
  /** The non-streaming response body (after the turn stopped). */
  body(): unknown;
  /** The in-stream error for a failure after the response started. */
  streamError(error: ApiError): string;
  /** SSE text sent while the stream is otherwise quiet. */
  readonly keepAlive: string;
  /** The stream's content type when it is not SSE (Gemini's streamed JSON array). */
  readonly contentType?: string;
}

export interface TurnOptions<R extends TurnRenderer> {
  requestId: string;
  keepAliveMs: number;
  headerWaitMs: number;
  headers: Record<string, string>;
  /** Declared tools the edge did not offer (x-frontier-tools-not-offered, with the worker's). */
  toolsNotOffered: readonly string[];
  /** Marked at the cache decision (and, for JSON, after the record); sent as `server-timing`. */
  timing: EdgeTiming;
  waitUntil: (promise: Promise<unknown>) => void;
  /**
   * Called exactly once when the call is over (record the turn if it stopped, else release). For a
   * turn that stopped, the final event (or the JSON body) waits for what it returns.
   */
  onDone: (renderer: R) => Promise<void>;
  /**
   * The request's: a stream marks it streaming when it returns, and done once its last byte is
   * written, after `onDone`; the turn's bookkeeping (`sent.after`) starts then.
   */
  sent: ResponseSent;
  /** A failure after the stream started (the client got the in-stream error): e.g. mark a dead worker down. */
  onStreamFailure?: (error: unknown) => void;
}

/** SSE writes a stream queues before the edge waits for the client to read (one worker event's events are one write). */
const SSE_QUEUE_EVENTS = 32;

export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

export async function respondJson<R extends TurnRenderer>(
  call: GenerateCall,
  renderer: R,
  options: TurnOptions<R>,
): Promise<Response> {
  let done = false;
  try {
    for (;;) {
      const event = await call.next();
      if (event === undefined) break;
      await renderer.push(event);
    }
    renderer.finish();
    options.timing.mark("worker");
    const headers = withNotOffered(options.headers, options.toolsNotOffered, renderer.prompt);
    if (renderer.prompt) headers["x-frontier-cache"] = cacheHeader(renderer.prompt);
    // What the client's next request (which may follow at once) needs is in place first (onDone).
    done = true;
    await options.onDone(renderer);
    options.timing.mark("record");
    headers["server-timing"] = options.timing.header();
    return jsonResponse(renderer.body(), { headers });
  } finally {
    if (!renderer.stopped) call.cancel();
    if (!done) options.waitUntil(options.onDone(renderer));
  }
}

export async function respondStream<R extends TurnRenderer>(
  call: GenerateCall,
  renderer: R,
  options: TurnOptions<R>,
): Promise<Response> {
  const head: RenderedEvent[] = [];
  try {
    const deadline = Date.now() + options.headerWaitMs;
    // No headers before the worker answers: its connect deadline bounds that wait, and a worker that
    // never took the request fails over before the client has a byte.
    await call.opened();
    while (!renderer.prompt) {
      const event = await call.nextWithin(deadline - Date.now());
      if (event === "timeout") break;
      if (event === undefined) {
        renderer.finish();
        break;
      }
      for (const out of await renderer.push(event)) if (!out.ping) head.push(out);
    }
  } catch (error) {
    call.cancel();
    options.waitUntil(options.onDone(renderer));
    throw error;
  }
  options.timing.mark("worker");
  const headers: Record<string, string> = {
    ...withNotOffered(options.headers, options.toolsNotOffered, renderer.prompt),
    ...SSE_HEADERS,
    ...(renderer.contentType === undefined ? {} : { "content-type": renderer.contentType }),
    "server-timing": options.timing.header(),
  };
  if (renderer.prompt) headers["x-frontier-cache"] = cacheHeader(renderer.prompt);
  // Room for a few events: writes queue while the client's socket takes the previous ones (pump).
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, {
    highWaterMark: SSE_QUEUE_EVENTS,
  });
  options.waitUntil(pump(call, renderer, head, writable.getWriter(), options));
  options.sent.streaming();
  return new Response(readable, { status: 200, headers });
}

async function pump<R extends TurnRenderer>(
  call: GenerateCall,
  renderer: R,
  head: RenderedEvent[],
  writer: WritableStreamDefaultWriter<Uint8Array>,
  options: TurnOptions<R>,
): Promise<void> {
  let recorded = false;
  const done = async (): Promise<void> => {
    if (recorded) return;
    recorded = true;
    await options.onDone(renderer);
  };
  const sse = new SseWriter(writer, { text: renderer.keepAlive, everyMs: options.keepAliveMs }, () => call.cancel());
  try {
    sse.armKeepAlive();
    await emit(sse, head, done);
    while (!renderer.stopped) {
      const event = await call.next();
      if (event === undefined) {
        renderer.finish();
        break;
      }
      await emit(sse, await renderer.push(event), done);
    }
  } catch (error) {
    if (!sse.clientGone && !call.cancelled) {
      await sse.write(renderer.streamError(toApiError(error, { requestId: options.requestId }))).catch(() => undefined);
    }
    options.onStreamFailure?.(error);
  } finally {
    await sse.close();
    if (!renderer.stopped) call.cancel();
    await done();
    options.sent.done();
    if (renderer.stopped && !(await drain(call))) call.cancel();
  }
}

/**
 * The events one worker event became go out in one write. The final one waits for `done` (the
 * turn's record, see respondJson), which starts as soon as the worker stopped and runs while the
 * events before the final one are written.
 */
async function emit(sse: SseWriter, outs: readonly RenderedEvent[], done: () => Promise<void>): Promise<void> {
  const final = outs.findIndex((out) => out.final);
  const recorded = final >= 0 ? done() : undefined;
  recorded?.catch(() => undefined); // awaited below, after the write before it
  const before = (final >= 0 ? outs.slice(0, final) : outs).map((out) => out.sse).join("");
  try {
    if (before !== "") await sse.write(before);
  } finally {
    await recorded;
  }
  if (final >= 0)
    await sse.write(
      outs
        .slice(final)
        .map((out) => out.sse)
        .join(""),
    );
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
