/**
 * A server-streaming gRPC-Web call read straight off its fetch: the edge's one streaming RPC,
 * Generate, on every turn. Frames are cut from the body's chunks as they arrive and decoded one
 * `next()` at a time, with no envelope stream, interceptor chain or async-generator layers between
 * the fetch and the turn (connect-web's client for the same call: 338 against 99 µs per call in
 * bench/edge/edge-parts.ts, and ~0.9 ms more of the edge's one thread per turn in the
 * A/B, docs/bench/history/issue-16-stop-7.md). The protocol's own checks (HTTP status, trailers-only errors,
 * `grpc-status` in the trailer) are connect's, so failures are the same `ConnectError`s its client
 * raised: a fetch that got no response is `Unavailable` (the call may go to another worker), a
 * connection that dropped after the worker answered is `Unavailable` with `TRANSPORT_LOST` metadata
 * (never retried elsewhere), a cancelled call is `Canceled`. Every wait has a deadline
 * (stream-deadlines.ts): a worker that misses one is cut (its fetch aborted) with `DeadlineExceeded`
 * naming the deadline.
 */
import type { DescMessage, DescMethodServerStreaming, MessageShape } from "@bufbuild/protobuf";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createMethodUrl, encodeEnvelope } from "@connectrpc/connect/protocol";
import {
  requestHeader,
  trailerFlag,
  trailerParse,
  validateResponse,
  validateTrailer,
} from "@connectrpc/connect/protocol-grpc-web";
import { DEFAULT_STREAM_DEADLINES, type StreamDeadlines } from "../config/worker-deadlines.ts";
import { type DeadlineKind, deadlineMissed, within } from "./stream-deadlines.ts";
import { connectionLost, workerUnreachable } from "./worker-client.ts";

/** A frame longer than this is refused (a worker's event is a few KB at most). */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;
const COMPRESSED_FLAG = 0b00000001;

export interface GrpcWebCallOptions {
  baseUrl: string;
  /** Sent as `authorization: Bearer <token>`. */
  token: string;
  /** More request headers (the call's capability, worker-capability.ts). */
  headers?: Record<string, string> | undefined;
  signal: AbortSignal;
  /** Default: DEFAULT_STREAM_DEADLINES. */
  deadlines?: StreamDeadlines | undefined;
}

export class GrpcWebStream<O extends DescMessage> {
  readonly #output: O;
  readonly #response: Response;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  /** The caller's signal (a cancel), not the deadlines'. */
  readonly #signal: AbortSignal;
  /** Aborts the fetch: the caller's cancel or a missed deadline. */
  readonly #fetchAbort: AbortController;
  readonly #deadlines: StreamDeadlines;
  /** Nothing of the body arrived yet (the first read has the first-event deadline). */
  #first = true;
  /** A status in the response headers: a trailers-only response (an error, or OK with no body). */
  readonly #headerStatus: { error: ConnectError | undefined } | undefined;
  /** Bytes received and not yet cut into frames. */
  #pending: Uint8Array = new Uint8Array(0);
  #trailerSeen = false;

  private constructor(
    output: O,
    response: Response,
    options: GrpcWebCallOptions,
    fetchAbort: AbortController,
    headerStatus: { error: ConnectError | undefined } | undefined,
  ) {
    this.#output = output;
    this.#response = response;
    this.#reader = (response.body as ReadableStream<Uint8Array>).getReader();
    this.#signal = options.signal;
    this.#fetchAbort = fetchAbort;
    this.#deadlines = options.deadlines ?? DEFAULT_STREAM_DEADLINES;
    this.#headerStatus = headerStatus;
  }

  /** Send the request and wait for the response's headers. */
  static async open<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    request: MessageShape<I>,
    options: GrpcWebCallOptions,
  ): Promise<GrpcWebStream<O>> {
    const { signal } = options;
    const fetchAbort = new AbortController();
    const onCancel = () => fetchAbort.abort();
    if (signal.aborted) onCancel();
    else signal.addEventListener("abort", onCancel, { once: true });
    const connectMs = (options.deadlines ?? DEFAULT_STREAM_DEADLINES).connectMs;
    let response: Response;
    try {
      const sent = fetch(createMethodUrl(options.baseUrl, method), {
        method: "POST",
        headers: requestHeader(
          true,
          undefined,
          { ...options.headers, authorization: `Bearer ${options.token}` },
          false,
        ),
        body: encodeEnvelope(0, toBinary(method.input, request)),
        signal: fetchAbort.signal,
        redirect: "manual",
      });
      response = await within(
        sent,
        connectMs,
        () => deadlineMissed("connect", connectMs),
        () => fetchAbort.abort(),
      );
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      throw signal.aborted ? cancelled(error) : workerUnreachable(error);
    }
    const { foundStatus, headerError } = validateResponse(response.status, response.headers);
    if (!response.body) throw headerError ?? new ConnectError("missing response body", Code.Unknown);
    const headerStatus = foundStatus ? { error: headerError } : undefined;
    return new GrpcWebStream(method.output, response, options, fetchAbort, headerStatus);
  }

  /** The next message, or undefined once the trailer said OK. Throws a ConnectError otherwise. */
  async next(): Promise<MessageShape<O> | undefined> {
    for (;;) {
      const frame = this.#cutFrame();
      if (frame) {
        if ((frame.flags & trailerFlag) === trailerFlag) {
          if (this.#trailerSeen) throw new ConnectError("extra trailer", Code.Unknown);
          this.#trailerSeen = true;
          validateTrailer(trailerParse(frame.data), this.#response.headers);
          continue;
        }
        if ((frame.flags & COMPRESSED_FLAG) === COMPRESSED_FLAG) {
          throw new ConnectError("protocol error: received unsupported compressed output", Code.Internal);
        }
        if (this.#trailerSeen) throw new ConnectError("extra message", Code.Unknown);
        return fromBinary(this.#output, frame.data);
      }
      const chunk = await this.#read();
      if (chunk === undefined) return this.#end();
      this.#pending = this.#pending.byteLength === 0 ? chunk : concat(this.#pending, chunk);
    }
  }

  /** Stop reading (the fetch's signal is the caller's to abort). */
  cancel(): void {
    this.#reader.cancel().catch(() => undefined);
  }

  async #read(): Promise<Uint8Array | undefined> {
    const kind: DeadlineKind = this.#first ? "first_event" : "idle";
    const ms = this.#first ? this.#deadlines.firstEventMs : this.#deadlines.idleMs;
    try {
      const { done, value } = await within(
        this.#reader.read(),
        ms,
        () => deadlineMissed(kind, ms),
        () => {
          this.cancel();
          this.#fetchAbort.abort();
        },
      );
      this.#first = false;
      return done ? undefined : value;
    } catch (error) {
      if (error instanceof ConnectError) throw error;
      throw this.#signal.aborted ? cancelled(error) : connectionLost(error);
    }
  }

  /** The body ended: fine after an OK trailer or an OK trailers-only response; else an error. */
  #end(): undefined {
    if (this.#pending.byteLength > 0) throw new ConnectError("protocol error: incomplete envelope", Code.Unknown);
    if (this.#trailerSeen) return undefined;
    if (this.#signal.aborted) throw cancelled(undefined);
    if (this.#headerStatus === undefined) throw new ConnectError("missing trailer", Code.Unknown);
    if (this.#headerStatus.error) throw this.#headerStatus.error;
    return undefined;
  }

  #cutFrame(): { flags: number; data: Uint8Array } | undefined {
    const buffer = this.#pending;
    if (buffer.byteLength < 5) return undefined;
    const length = new DataView(buffer.buffer, buffer.byteOffset, 5).getUint32(1);
    if (length > MAX_FRAME_BYTES) {
      throw new ConnectError(`protocol error: a frame of ${length} bytes is over the limit`, Code.ResourceExhausted);
    }
    if (buffer.byteLength < 5 + length) return undefined;
    this.#pending = buffer.subarray(5 + length);
    return { flags: buffer[0] ?? 0, data: buffer.subarray(5, 5 + length) };
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

function cancelled(cause: unknown): ConnectError {
  return new ConnectError("the call was cancelled", Code.Canceled, undefined, undefined, cause);
}
