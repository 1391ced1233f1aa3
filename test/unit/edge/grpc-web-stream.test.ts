/**
 * The edge's gRPC-Web stream reader (edge/worker/grpc-web-stream.ts) against scripted fetch responses: frames
 * cut across any chunking, and each way a call can fail mapped to the ConnectError the edge's error
 * handling (worker-errors.ts) expects.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { GrpcWebStream } from "../../../edge/worker/grpc-web-stream.ts";
import { missedDeadline } from "../../../edge/worker/stream-deadlines.ts";
import { TRANSPORT_LOST } from "../../../edge/worker/worker-client.ts";
import {
  type GenerateEvent,
  GenerateEventSchema,
  GenerateRequestSchema,
  WorkerService,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const GRPC_WEB = { "content-type": "application/grpc-web+proto" };

const trailer = (text: string) => encodeEnvelope(0x80, new TextEncoder().encode(text));
const text = (t: string) => create(GenerateEventSchema, { event: { case: "textDelta", value: { text: t } } });
const message = (event: GenerateEvent) => encodeEnvelope(0, toBinary(GenerateEventSchema, event));

/** A body that hands out `bytes` in chunks of `size`, then fails with `error` if given. */
function body(bytes: Uint8Array, size: number, error?: Error): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) {
        if (error) controller.error(error);
        else controller.close();
        return;
      }
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

function respond(response: () => Response | Promise<Response>) {
  return vi.spyOn(globalThis, "fetch").mockImplementation(async () => response());
}

async function readAll(
  signal = new AbortController().signal,
  deadlines?: { connectMs: number; firstEventMs: number; idleMs: number },
): Promise<string[]> {
  const request = create(GenerateRequestSchema, { sessionId: "s" });
  const stream = await GrpcWebStream.open(WorkerService.method.generate, request, {
    baseUrl: "http://worker:1",
    token: "t".repeat(20),
    signal,
    deadlines,
  });
  const out: string[] = [];
  for (let event = await stream.next(); event !== undefined; event = await stream.next()) {
    out.push(event.event.case === "textDelta" ? event.event.value.text : String(event.event.case));
  }
  return out;
}

async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConnectError);
  return error as ConnectError;
}

afterEach(() => vi.restoreAllMocks());

describe("GrpcWebStream", () => {
  it("sends one enveloped request with the worker token and reads every message, whatever the chunking", async () => {
    const bytes = new Uint8Array([...message(text("a")), ...message(text("bc")), ...trailer("grpc-status: 0\r\n")]);
    for (const size of [1, 3, 7, bytes.length]) {
      const fetch = respond(() => new Response(body(bytes, size), { headers: GRPC_WEB }));
      expect(await readAll()).toEqual(["a", "bc"]);
      const [url, init] = fetch.mock.calls[0] ?? [];
      expect(url).toBe("http://worker:1/frontier.worker.v1.WorkerService/Generate");
      expect(new Headers(init?.headers).get("authorization")).toBe(`Bearer ${"t".repeat(20)}`);
      expect(new Headers(init?.headers).get("content-type")).toBe("application/grpc-web+proto");
      const sent = new Uint8Array(init?.body as Uint8Array);
      expect([sent[0], new DataView(sent.buffer).getUint32(1)]).toEqual([0, sent.length - 5]);
      expect(fromBinary(GenerateRequestSchema, sent.subarray(5)).sessionId).toBe("s");
      fetch.mockRestore();
    }
  });

  it("raises the trailer's status, and a trailers-only response's", async () => {
    const bytes = new Uint8Array([...message(text("a")), ...trailer("grpc-status: 9\r\ngrpc-message: not%20now\r\n")]);
    respond(() => new Response(body(bytes, 4), { headers: GRPC_WEB }));
    const inTrailer = await failure(readAll());
    expect([inTrailer.code, inTrailer.rawMessage]).toEqual([Code.FailedPrecondition, "not now"]);
    vi.restoreAllMocks();
    respond(() => new Response(null, { headers: { ...GRPC_WEB, "grpc-status": "8", "grpc-message": "full" } }));
    const headersOnly = await failure(readAll());
    expect([headersOnly.code, headersOnly.rawMessage]).toEqual([Code.ResourceExhausted, "full"]);
  });

  it("tells a worker it never reached from a connection lost after it answered", async () => {
    respond(() => Promise.reject(new TypeError("connection refused")));
    const unreachable = await failure(readAll());
    expect(unreachable.code).toBe(Code.Unavailable);
    expect(unreachable.metadata.get(TRANSPORT_LOST.header)).toBeNull();
    vi.restoreAllMocks();
    respond(
      () => new Response(body(message(text("a")), 2, new TypeError("Network connection lost.")), { headers: GRPC_WEB }),
    );
    const lost = await failure(readAll());
    expect(lost.code).toBe(Code.Unavailable);
    expect(lost.metadata.get(TRANSPORT_LOST.header)).toBe(TRANSPORT_LOST.value);
  });

  it("refuses a stream without its trailer, a cut frame, a compressed frame and a non-2xx status", async () => {
    const cases: [Uint8Array | null, number, Code][] = [
      [message(text("a")), 200, Code.Unknown],
      [message(text("a")).slice(0, 6), 200, Code.Unknown],
      [
        new Uint8Array([...encodeEnvelope(1, new Uint8Array([1])), ...trailer("grpc-status: 0\r\n")]),
        200,
        Code.Internal,
      ],
      [null, 503, Code.Unavailable],
    ];
    for (const [bytes, status, code] of cases) {
      respond(() => new Response(bytes && body(bytes, 5), { status, headers: GRPC_WEB }));
      expect((await failure(readAll())).code).toBe(code);
      vi.restoreAllMocks();
    }
  });

  it("reports a cancelled call as cancelled, not as a lost worker", async () => {
    const abort = new AbortController();
    respond(() => {
      abort.abort();
      return new Response(body(message(text("a")), 2, new Error("aborted")), { headers: GRPC_WEB });
    });
    expect((await failure(readAll(abort.signal))).code).toBe(Code.Canceled);
  });
});

/** A body that hands out `chunks`, then stays silent (a frozen worker holding the connection open). */
function silentAfter(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      const chunk = chunks[at++];
      if (chunk) controller.enqueue(chunk);
      else return new Promise<void>(() => undefined);
    },
  });
}

describe("GrpcWebStream deadlines (a frozen worker)", () => {
  const deadlines = { connectMs: 40, firstEventMs: 40, idleMs: 40 };

  it("cuts a call whose worker never answers (connect), aborting the fetch", async () => {
    let fetchSignal: AbortSignal | undefined;
    vi.spyOn(globalThis, "fetch").mockImplementation((_input, init) => {
      fetchSignal = init?.signal ?? undefined;
      return new Promise<Response>(() => undefined);
    });
    const error = await failure(readAll(undefined, deadlines));
    expect([error.code, missedDeadline(error)]).toEqual([Code.DeadlineExceeded, "connect"]);
    expect(fetchSignal?.aborted).toBe(true);
  });

  it("cuts a stream whose worker sends headers and nothing more (first_event), or goes silent mid-way (idle)", async () => {
    respond(() => new Response(silentAfter([]), { headers: GRPC_WEB }));
    const first = await failure(readAll(undefined, deadlines));
    expect([first.code, missedDeadline(first)]).toEqual([Code.DeadlineExceeded, "first_event"]);
    vi.restoreAllMocks();
    let fetchSignal: AbortSignal | undefined;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (_input, init) => {
      fetchSignal = init?.signal ?? undefined;
      return new Response(silentAfter([message(text("a"))]), { headers: GRPC_WEB });
    });
    const idle = await failure(readAll(undefined, deadlines));
    expect([idle.code, missedDeadline(idle)]).toEqual([Code.DeadlineExceeded, "idle"]);
    expect(fetchSignal?.aborted).toBe(true);
  });

  it("never cuts a stream that keeps sending within the idle deadline, however long it runs", async () => {
    const events = Array.from({ length: 12 }, (_, i) => message(text(String(i))));
    const all = [...events, trailer("grpc-status: 0\r\n")];
    let at = 0;
    respond(
      () =>
        new Response(
          new ReadableStream({
            async pull(controller) {
              const chunk = all[at++];
              if (!chunk) return controller.close();
              await new Promise((r) => setTimeout(r, 10)); // 12 x 10 ms: longer than one idle deadline in all
              controller.enqueue(chunk);
            },
          }),
          { headers: GRPC_WEB },
        ),
    );
    expect(await readAll(undefined, { connectMs: 1000, firstEventMs: 1000, idleMs: 60 })).toHaveLength(12);
  });
});
