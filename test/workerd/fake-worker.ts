/**
 * A fake GPU worker for in-workerd tests: intercepts the edge's gRPC-Web fetches to WORKER_URLS and
 * answers with scripted GenerateEvents framed as gRPC-Web (data frames + a trailer frame).
 */
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { vi } from "vitest";
import {
  type CountTokensRequest,
  CountTokensRequestSchema,
  CountTokensResponseSchema,
  DrainResponseSchema,
  type GenerateEvent,
  GenerateEventSchema,
  type GenerateRequest,
  GenerateRequestSchema,
  HealthResponseSchema,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

export const WORKER_URL = "http://127.0.0.1:1";
const SERVICE = "/frontier.worker.v1.WorkerService/";

export type EventInit = MessageInitShape<typeof GenerateEventSchema>["event"];
export const event = (init: EventInit): GenerateEvent => create(GenerateEventSchema, { event: init });

export interface GenerateScriptContext {
  request: GenerateRequest;
  signal: AbortSignal;
  /** The worker base URL the edge called. */
  url: string;
}

export interface FakeWorkerOptions {
  inputTokens?: number;
  /** Base URLs this fake answers (default: WORKER_URL). */
  urls?: string[];
  /** Base URLs whose connections fail, like a dead worker's. */
  unreachable?: Set<string>;
  /** Base URLs that take the connection and never answer (a frozen or partitioned host), until the caller aborts. */
  frozen?: Set<string>;
  /** What the Health RPC answers (default: ready, worker "fake", model "frontier-test"). */
  health?: (url: string) => MessageInitShape<typeof HealthResponseSchema>;
  /** What the Drain RPC answers. */
  drain?: (url: string) => MessageInitShape<typeof DrainResponseSchema>;
}

export type GenerateScript = (ctx: GenerateScriptContext) => AsyncIterable<GenerateEvent> | Iterable<GenerateEvent>;

export interface FakeWorker {
  requests: GenerateRequest[];
  /** The CountTokens calls the edge made. */
  counts: CountTokensRequest[];
  /** The worker base URL of each Generate call. */
  urls: string[];
  /**
   * Per Generate call: whether the edge cancelled it before the worker finished (its fetch signal
   * fired or it cancelled the response body). connect-es aborts the fetch signal after every call,
   * also a successful one, so aborts after the trailer do not count. A plain flag: the signal
   * itself belongs to the edge request's I/O context.
   */
  cancelled: boolean[];
  restore(): void;
}

export function installFakeWorker(script: GenerateScript, options: FakeWorkerOptions = {}): FakeWorker {
  const realFetch = globalThis.fetch;
  const fake: FakeWorker = { requests: [], counts: [], urls: [], cancelled: [], restore: () => spy.mockRestore() };
  const bases = options.urls ?? [WORKER_URL];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const base = bases.find((b) => url.startsWith(b + SERVICE));
    if (base === undefined) return realFetch(input, init);
    if (options.unreachable?.has(base)) throw new TypeError("Network connection lost.");
    const method = url.slice(base.length + SERVICE.length);
    if (options.frozen?.has(base)) {
      const body = new Uint8Array(init?.body as Uint8Array).subarray(5);
      const call = method === "Generate" ? fake.requests.push(fromBinary(GenerateRequestSchema, body)) - 1 : -1;
      if (call >= 0) [fake.urls[call], fake.cancelled[call]] = [base, false];
      return new Promise<Response>((_, reject) => {
        const abort = () => {
          if (call >= 0) fake.cancelled[call] = true;
          reject(new DOMException("aborted", "AbortError"));
        };
        if (init?.signal?.aborted) abort();
        else init?.signal?.addEventListener("abort", abort, { once: true });
      });
    }
    const body = new Uint8Array(init?.body as Uint8Array).subarray(5);
    const signal = init?.signal ?? new AbortController().signal;
    switch (method) {
      case "Generate": {
        const request = fromBinary(GenerateRequestSchema, body);
        const call = fake.requests.push(request) - 1;
        fake.urls[call] = base;
        fake.cancelled[call] = false;
        let finished = false;
        const onCancel = () => {
          if (!finished) fake.cancelled[call] = true;
        };
        signal.addEventListener("abort", onCancel, { once: true });
        return grpcWebStream(script({ request, signal, url: base }), signal, onCancel, () => {
          finished = true;
        });
      }
      case "CountTokens":
        fake.counts.push(fromBinary(CountTokensRequestSchema, body));
        return grpcWebUnary(
          toBinary(
            CountTokensResponseSchema,
            create(CountTokensResponseSchema, { inputTokens: options.inputTokens ?? 7 }),
          ),
        );
      case "Health":
        return grpcWebUnary(
          toBinary(
            HealthResponseSchema,
            create(
              HealthResponseSchema,
              options.health?.(base) ?? { ready: true, workerId: "fake", modelName: "frontier-test" },
            ),
          ),
        );
      case "Drain":
        return grpcWebUnary(toBinary(DrainResponseSchema, create(DrainResponseSchema, options.drain?.(base) ?? {})));
      default:
        return new Response("unknown method", { status: 404 });
    }
  });
  return fake;
}

const TRAILER = encodeEnvelope(0x80, new TextEncoder().encode("grpc-status: 0\r\ngrpc-message: \r\n"));
const HEADERS = { "content-type": "application/grpc-web+proto" };

function grpcWebUnary(message: Uint8Array): Response {
  const all = new Uint8Array([...encodeEnvelope(0, message), ...TRAILER]);
  return new Response(all, { status: 200, headers: HEADERS });
}

function grpcWebStream(
  events: AsyncIterable<GenerateEvent> | Iterable<GenerateEvent>,
  signal: AbortSignal,
  onCancel: () => void,
  onFinish: () => void,
): Response {
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      try {
        for await (const e of events) {
          if (signal.aborted) return;
          controller.enqueue(encodeEnvelope(0, toBinary(GenerateEventSchema, e)));
        }
        onFinish();
        controller.enqueue(TRAILER);
        controller.close();
      } catch (error) {
        controller.error(error);
      }
    },
    cancel: onCancel,
  });
  return new Response(stream, { status: 200, headers: HEADERS });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
