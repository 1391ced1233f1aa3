import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import {
  CacheDecision,
  MissReason,
  Role,
  StopReason,
  WorkerErrorCode,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { prefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { type DecodedSseEvent, SseDecoder } from "../support/sse-decoder.ts";
import { event, type FakeWorker, installFakeWorker, sleep } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

const prompt = (messageId: string, cached = 0) =>
  event({
    case: "prompt",
    value: {
      promptTokens: 50,
      cachedTokens: cached,
      decision: cached ? CacheDecision.LIVE_TOKEN_PREFIX : CacheDecision.COLD,
      missReason: cached ? MissReason.NONE : MissReason.NO_LIVE_STATE,
      messageId,
    },
  });

async function readSse(response: Response): Promise<DecodedSseEvent[]> {
  const decoder = new SseDecoder();
  const events = decoder.push(new Uint8Array(await response.arrayBuffer()));
  return [...events, ...decoder.end()];
}

describe("generate through a fake worker", () => {
  it("answers non-streaming requests with a message and forwards a normalised request", async () => {
    fake = installFakeWorker(async function* ({ request }) {
      const toolId = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
      yield prompt(await mintId(SECRET, "msg", request.tenantId, request.sessionId));
      yield event({ case: "textDelta", value: { text: "Hello" } });
      yield event({ case: "toolCallStart", value: { index: 0, id: toolId, name: "Bash" } });
      yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"command":"echo hi"}' } });
      yield event({ case: "toolCallEnd", value: { index: 0 } });
      yield event({
        case: "stop",
        value: { reason: StopReason.TOOL_USE, usage: { inputTokens: 50, cachedTokens: 0, outputTokens: 4 } },
      });
    });
    const response = await call("/v1/messages", {
      method: "POST",
      body: messagesBody({
        system: [
          { type: "text", text: "x-anthropic-billing-header: a=1" },
          { type: "text", text: "Be brief." },
        ],
      }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-cache")).toBe("decision=cold; miss=no-live-state; cached=0; prompt=50");
    const message = (await response.json()) as Record<string, unknown>;
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "frontier-test",
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 50, cache_read_input_tokens: 0, cache_creation_input_tokens: 0, output_tokens: 4 },
    });
    expect(message.content).toMatchObject([
      { type: "text", text: "Hello" },
      { type: "tool_use", name: "Bash", input: { command: "echo hi" } },
    ]);
    const forwarded = fake.requests[0];
    expect(forwarded?.requestId).toBe(response.headers.get("request-id"));
    expect(forwarded?.tenantId).toBe("local");
    expect(forwarded?.sessionId).toMatch(/^[0-9a-f]{32}$/);
    expect(forwarded?.epoch).toBe(1n);
    expect(forwarded?.conversation?.system).toEqual(["Be brief."]);
    expect(forwarded?.conversation?.messages[0]?.role).toBe(Role.USER);
    // The edge's one prefix fingerprint rides with the request (the worker reports held prefixes).
    const conversation = forwarded?.conversation;
    if (!conversation) throw new Error("no conversation forwarded");
    expect(forwarded?.prefixFingerprint).toBe(await prefixFingerprint("local", conversation));
    expect(fake.cancelled).toEqual([false]);
  });

  it("streams Anthropic SSE, every event with an event: line, and routes the next turn by tool_use id", async () => {
    fake = installFakeWorker(async function* ({ request }) {
      const toolId = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
      yield prompt(await mintId(SECRET, "msg", request.tenantId, request.sessionId));
      yield event({ case: "thinkingDelta", value: { text: "hmm" } });
      yield event({ case: "thinkingEnd", value: { signature: "sig" } });
      yield event({ case: "toolCallStart", value: { index: 0, id: toolId, name: "Bash" } });
      yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: "{}" } });
      yield event({ case: "toolCallEnd", value: { index: 0 } });
      yield event({
        case: "stop",
        value: { reason: StopReason.TOOL_USE, usage: { inputTokens: 50, outputTokens: 3 } },
      });
    });
    const first = await call("/v1/messages?beta=true", { method: "POST", body: messagesBody({ stream: true }) });
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toContain("text/event-stream");
    expect(first.headers.get("x-frontier-cache")).toContain("decision=cold");
    const events = await readSse(first);
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    for (const e of events) expect((JSON.parse(e.data) as { type: string }).type).toBe(e.event);
    const toolUse = JSON.parse(events[5]?.data ?? "{}") as { content_block: { id: string } };
    const toolId = toolUse.content_block.id;
    const sessionId = fake.requests[0]?.sessionId ?? "";
    await sleep(50); // the turn is recorded after the stream ends
    const info = await env.SESSIONS.getByName(sessionId).get("local");
    expect(info?.frontierToolUseIds).toEqual([toolId]);
    expect(info?.turns).toBe(1);

    const second = await call("/v1/messages", {
      method: "POST",
      body: messagesBody({
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_use", id: toolId, name: "Bash", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: "ok", is_error: false }] },
        ],
      }),
    });
    expect(second.headers.get("x-frontier-route")).toBe("tool-result; epoch=1");
    await second.arrayBuffer();
    expect(fake.requests[1]?.sessionId).toBe(sessionId);
    // Completed calls are never cancelled (the worker would see a spurious abort).
    expect(fake.cancelled).toEqual([false, false]);
  });

  it("turns a worker error before the first byte into an HTTP error", async () => {
    fake = installFakeWorker(function* () {
      yield event({
        case: "error",
        value: {
          code: WorkerErrorCode.UNKNOWN_TOOL_USE_ID,
          message: "unknown tool_use_id toolu_zzz",
          param: "messages.2.content.0.tool_use_id",
        },
      });
    });
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("messages.2.content.0.tool_use_id: unknown tool_use_id toolu_zzz");
    expect(body.error.message).toContain("full conversation history");
  });

  it("maps OVERLOADED to 529 and SESSION_BUSY to 409", async () => {
    for (const [code, status] of [
      [WorkerErrorCode.OVERLOADED, 529],
      [WorkerErrorCode.SESSION_BUSY, 409],
      [WorkerErrorCode.CONTEXT_TOO_LONG, 400],
      [WorkerErrorCode.INTERNAL, 500],
    ] as const) {
      fake = installFakeWorker(function* () {
        yield event({ case: "error", value: { code, message: "no" } });
      });
      const response = await call("/v1/messages", { method: "POST", body: messagesBody() });
      expect(response.status).toBe(status);
      expect(response.headers.get("x-should-retry")).toBe(String(status !== 400 && status !== 500));
      if (status === 529 || status === 409) expect(response.headers.get("retry-after")).toBeTruthy();
      await response.arrayBuffer();
      fake.restore();
    }
  });

  it("sends an SSE error event when the worker fails after the stream started", async () => {
    fake = installFakeWorker(function* () {
      yield prompt("msg_x");
      yield event({ case: "textDelta", value: { text: "partial" } });
      yield event({ case: "error", value: { code: WorkerErrorCode.OVERLOADED, message: "worker draining" } });
    });
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    expect(response.status).toBe(200);
    const events = await readSse(response);
    expect(events.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "error",
    ]);
    expect(JSON.parse(events.at(-1)?.data ?? "{}")).toMatchObject({
      type: "error",
      error: { type: "overloaded_error", message: "worker draining" },
    });
  });

  it("starts the stream without the cache header when the prompt event is slow, pinging meanwhile", async () => {
    fake = installFakeWorker(async function* () {
      await sleep(600);
      yield prompt("msg_slow");
      yield event({ case: "textDelta", value: { text: "ok" } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    });
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-cache")).toBeNull();
    const events = (await readSse(response)).map((e) => e.event);
    expect(events[0]).toBe("ping");
    expect(events.slice(events.indexOf("message_start"))).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("delivers a stream far larger than its write queue, whole and in order, to a client that reads late", async () => {
    const deltas = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(4, "0")}${"x".repeat(96)}`);
    fake = installFakeWorker(function* () {
      yield prompt("msg_big");
      for (const text of deltas) yield event({ case: "textDelta", value: { text } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    });
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    expect(response.status).toBe(200);
    await sleep(200); // the edge fills its queue and waits for this client
    const events = await readSse(response);
    const text = events
      .filter((e) => e.event === "content_block_delta")
      .map((e) => (JSON.parse(e.data) as { delta: { text: string } }).delta.text)
      .join("");
    expect(text).toBe(deltas.join(""));
    expect(events.at(-1)?.event).toBe("message_stop");
  });

  it("cancels the gRPC call when the client goes away", async () => {
    fake = installFakeWorker(async function* ({ signal }) {
      yield prompt("msg_cancel");
      for (let i = 0; i < 200 && !signal.aborted; i++) {
        yield event({ case: "textDelta", value: { text: "tick " } });
        await sleep(20);
      }
    });
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    for (let i = 0; i < 100 && !fake.cancelled[0]; i++) await sleep(20);
    expect(fake.cancelled[0]).toBe(true);
  });

  it("counts tokens", async () => {
    fake = installFakeWorker(() => [], { inputTokens: 42 });
    const response = await call("/v1/messages/count_tokens", {
      method: "POST",
      body: { model: "m", messages: [{ role: "user", content: "hi" }] },
    });
    expect(await response.json()).toEqual({ input_tokens: 42 });
  });

  it("reports health", async () => {
    const down = await call("/healthz", { key: null });
    expect(down.status).toBe(503);
    await down.arrayBuffer();
    fake = installFakeWorker(() => []);
    const up = await call("/healthz", { key: null });
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ status: "ok", workers: [{ index: 0, ready: true, worker_id: "fake" }] });
  });
});
