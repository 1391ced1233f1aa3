/**
 * One server-streaming Generate call (read by grpc-web-stream.ts). Cancellation flows down: the
 * client's disconnect (or an explicit cancel) aborts the gRPC-Web fetch, which the worker sees as a
 * cancelled call. The edge signs the thinking the worker streamed (`signThinking`): a worker holds no
 * key a signature could be made with, so its `ThinkingEnd` arrives unsigned and leaves here signed.
 */
import {
  type GenerateEvent,
  type GenerateRequest,
  type Stop,
  WorkerService,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { StreamDeadlines } from "../config/worker-deadlines.ts";
import { GrpcWebStream } from "./grpc-web-stream.ts";
import { rpcErrorToApiError } from "./worker-errors.ts";

/** The worker a call goes to: its gRPC-Web base URL, the shared worker token and the call's capability headers. */
export interface WorkerTarget {
  baseUrl: string;
  token: string;
  headers?: Record<string, string> | undefined;
  /** The stream's connect, first-event and idle deadlines (default: DEFAULT_STREAM_DEADLINES). */
  deadlines?: StreamDeadlines | undefined;
}

/** The signature of a finished thinking block (shared/thinking-signature.ts for the tenant). */
export type ThinkingSigner = (thinking: string) => Promise<string>;

export class GenerateCall {
  readonly #abort = new AbortController();
  readonly #stream: Promise<GrpcWebStream<typeof WorkerService.method.generate.output>>;
  #pending: Promise<GenerateEvent | undefined> | undefined;
  #stop: Stop | undefined;
  readonly #signThinking: ThinkingSigner | undefined;
  /** Thinking streamed since the last ThinkingEnd. */
  #thinking = "";
  #outputEvents = 0;

  constructor(
    worker: WorkerTarget,
    request: GenerateRequest,
    clientSignal?: AbortSignal,
    signThinking?: ThinkingSigner,
  ) {
    this.#signThinking = signThinking;
    if (clientSignal?.aborted) this.#abort.abort();
    clientSignal?.addEventListener("abort", () => this.cancel(), { once: true });
    this.#stream = GrpcWebStream.open(WorkerService.method.generate, request, {
      ...worker,
      signal: this.#abort.signal,
    });
    this.#stream.catch(() => undefined); // read (and rethrown) by next()
  }

  /** Output events received (text, thinking, tool-call argument deltas): each carries at least one sampled token. */
  get outputEvents(): number {
    return this.#outputEvents;
  }

  /** The worker's stop event (with the turn's usage), once it arrived. */
  get stop(): Stop | undefined {
    return this.#stop;
  }

  /**
   * Resolves once the worker answered the call (its response's headers arrived); throws the
   * ApiError next() would (unreachable, or the connect deadline passed).
   */
  async opened(): Promise<void> {
    try {
      await this.#stream;
    } catch (error) {
      throw rpcErrorToApiError(error);
    }
  }

  get cancelled(): boolean {
    return this.#abort.signal.aborted;
  }

  cancel(): void {
    if (this.#abort.signal.aborted) return;
    this.#abort.abort();
    this.#stream.then(
      (stream) => stream.cancel(),
      () => undefined,
    );
  }

  /** The next event, or undefined at the end of the stream. RPC failures become ApiErrors. */
  async next(): Promise<GenerateEvent | undefined> {
    const pending = this.#pending ?? this.#read();
    this.#pending = undefined;
    try {
      const event = await pending;
      if (event && OUTPUT_EVENTS.has(event.event.case)) this.#outputEvents++;
      if (event?.event.case === "stop") this.#stop = event.event.value;
      else if (event?.event.case === "thinkingDelta") this.#thinking += event.event.value.text;
      else if (event?.event.case === "thinkingEnd") {
        if (this.#signThinking) event.event.value.signature = await this.#signThinking(this.#thinking);
        this.#thinking = "";
      }
      return event;
    } catch (error) {
      throw rpcErrorToApiError(error);
    }
  }

  /** Like next(), but gives up after `ms` with "timeout"; the read stays pending for the next call. */
  async nextWithin(ms: number): Promise<GenerateEvent | undefined | "timeout"> {
    const pending = this.#pending ?? this.#read();
    this.#pending = pending;
    pending.catch(() => undefined);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), Math.max(0, ms));
    });
    try {
      const winner = await Promise.race([pending.then(() => "ready" as const), timeout]);
      if (winner === "timeout") return "timeout";
    } catch {
      // the read failed: next() rethrows it as an ApiError
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
    return this.next();
  }

  async #read(): Promise<GenerateEvent | undefined> {
    return (await this.#stream).next();
  }
}

const OUTPUT_EVENTS: ReadonlySet<GenerateEvent["event"]["case"]> = new Set([
  "textDelta",
  "thinkingDelta",
  "toolCallDelta",
]);
