/**
 * The Worker bench/edge/edge-parts.ts runs in workerd: `GET /` lists the parts, `GET /<part>?n=N` runs one piece of the edge's
 * per-turn work N times (a 40-message Messages request, an instant worker's three events) and
 * answers; the client times N = 0 against N = 50, so workerd's own cost per request cancels out.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { encodeEnvelope } from "@connectrpc/connect/protocol";
import { toGenerateRequest } from "../../edge/protocols/messages/request/normalize.ts";
import { validateMessagesRequest } from "../../edge/protocols/messages/request/validate.ts";
import { AnthropicTurn } from "../../edge/protocols/messages/response/turn.ts";
import { sha256Hex } from "../../edge/tenancy/auth.ts";
import { GenerateCall } from "../../edge/worker/generate-call.ts";
import { workerClient } from "../../edge/worker/worker-client.ts";
import {
  CacheDecision,
  type Conversation,
  GenerateEventSchema,
  GenerateRequestSchema,
  StopReason,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { prefixFingerprint } from "../../shared/prefix-fingerprint.ts";

const messages = Array.from({ length: 40 }, (_, m) =>
  m % 2 ? { role: "assistant", content: "pong" } : { role: "user", content: "ping" },
);
const requestText = JSON.stringify({ model: "m", max_tokens: 1, stream: true, messages });
const requestBytes = new TextEncoder().encode(requestText);
const body = validateMessagesRequest(JSON.parse(requestText), { requireMaxTokens: true });
const generate = toGenerateRequest(body, { requestId: "req_x", tenantId: "local", sessionId: "s", epoch: 1 });
const conversation = generate.conversation as Conversation;

const events = [
  { case: "prompt", value: { promptTokens: 9, messageId: "msg_x", decision: CacheDecision.LIVE_TEXT_PREFIX } },
  { case: "textDelta", value: { text: "pong" } },
  { case: "stop", value: { reason: StopReason.END_TURN, usage: { inputTokens: 1, cachedTokens: 8, outputTokens: 1 } } },
].map((event) => toBinary(GenerateEventSchema, create(GenerateEventSchema, { event } as never)));

const grpcWebBody = new Uint8Array([
  ...events.flatMap((event) => [...encodeEnvelope(0, event)]),
  ...encodeEnvelope(0x80, new TextEncoder().encode("grpc-status: 0\r\n")),
]);

/** Run `call` against an in-memory gRPC-Web answer (no network: only the client's own work). */
async function withInstantAnswer(call: () => Promise<void>): Promise<void> {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async () =>
    new Response(grpcWebBody, { headers: { "content-type": "application/grpc-web+proto" } });
  try {
    await call();
  } finally {
    globalThis.fetch = realFetch;
  }
}

const TOKEN = "bench-worker-token-0000";

const PARTS: Record<string, () => unknown> = {
  nothing: () => undefined,
  "sha256 (a key, a hint)": () => sha256Hex("sk-frontier-local"),
  "decode + JSON.parse": () => JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(requestBytes)),
  "parse + validate": () => validateMessagesRequest(JSON.parse(requestText), { requireMaxTokens: true }),
  normalize: () => toGenerateRequest(body, { requestId: "req_x", tenantId: "local", sessionId: "", epoch: 0 }),
  "GenerateRequest toBinary": () => toBinary(GenerateRequestSchema, generate),
  "prefix fingerprint": () => prefixFingerprint("local", conversation),
  "render 3 events as SSE": async () => {
    const turn = new AnthropicTurn("m", "req_x", { secret: "x".repeat(32), tenant: "local" });
    for (const event of events) await turn.push(fromBinary(GenerateEventSchema, event));
  },
  "SSE through a TransformStream": async () => {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>(undefined, { highWaterMark: 32 });
    const writer = writable.getWriter();
    const bytes = new TextEncoder().encode("event: x\ndata: {}\n\n");
    for (let i = 0; i < 4; i++) void writer.write(bytes);
    void writer.close();
    const reader = readable.getReader();
    while (!(await reader.read()).done) {}
  },
  "Generate: connect-web client": () =>
    withInstantAnswer(async () => {
      const events = workerClient("http://worker:1", TOKEN).generate(generate)[Symbol.asyncIterator]();
      while (!(await events.next()).done) {}
    }),
  "Generate: direct reader (GenerateCall)": () =>
    withInstantAnswer(async () => {
      const call = new GenerateCall({ baseUrl: "http://worker:1", token: TOKEN }, generate);
      while ((await call.next()) !== undefined) {}
    }),
  "a log line": () => console.log(JSON.stringify({ event: "anthropic turn", request: "req_x", session: "abcd" })),
  "setTimeout(0)": () => new Promise((resolve) => setTimeout(resolve, 0)),
};

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/") return Response.json(Object.keys(PARTS));
    const part = PARTS[decodeURIComponent(url.pathname.slice(1))];
    if (!part) return new Response("no such part", { status: 404 });
    const n = Number(url.searchParams.get("n") ?? 1);
    for (let i = 0; i < n; i++) await part();
    return new Response("ok");
  },
};
