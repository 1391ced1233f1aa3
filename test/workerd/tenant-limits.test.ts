/**
 * Per-tenant limits from the env (issue 14; TENANT_LIMITS in vitest.workerd.config.ts): past its rate
 * or its concurrency a tenant gets 429 rate_limit_error with retry-after, in the route's protocol
 * shape; other tenants are not affected; a slot is held until the response body ends. Admission is
 * decided once a request is decoded (its model and bound): an invalid body is a 400 and not counted.
 */
import { waitForGlobalWaitUntil } from "cloudflare:test-internal";
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

/** A worker that answers every turn with one word. */
function wordWorker(): FakeWorker {
  return installFakeWorker(async function* () {
    yield event({
      case: "prompt",
      value: { promptTokens: 3, cachedTokens: 0, decision: CacheDecision.COLD, messageId: "" },
    });
    yield event({ case: "textDelta", value: { text: "ok" } });
    yield event({ case: "stop", value: { usage: { inputTokens: 3, cachedTokens: 0, outputTokens: 1 } } });
  });
}

describe("per-tenant limits", () => {
  it("a tenant past its requests per minute gets 429 with retry-after; another tenant does not", async () => {
    fake = wordWorker();
    // An invalid body is answered before admission: it is not counted.
    expect((await call("/v1/messages", { method: "POST", key: "sk-test-limited", body: {} })).status).toBe(400);
    for (let i = 0; i < 3; i++) {
      const admitted = await call("/v1/messages", { method: "POST", key: "sk-test-limited", body: messagesBody() });
      expect(admitted.status).toBe(200);
      expect(admitted.headers.get("anthropic-ratelimit-requests-remaining")).toBe(String(2 - i));
    }
    const limited = await call("/v1/messages", { method: "POST", key: "sk-test-limited", body: messagesBody() });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    const body = (await limited.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(body.error.message).toMatch(/3 requests per minute/);
    const responses = await call("/v1/responses", {
      method: "POST",
      key: "sk-test-limited",
      body: { model: "frontier-test", input: "hi" },
      bearer: true,
    });
    expect(responses.status).toBe(429);
    // OpenAI's shape: its own type name for a 429.
    expect(((await responses.json()) as { error: { type: string } }).error.type).toBe("rate_limit_exceeded");
    expect((await call("/v1/messages", { method: "POST", body: messagesBody() })).status).toBe(200);
  });

  it("a refused tenant's large body is never read past the first MiB", async () => {
    // sk-test-limited allows 3 requests a minute (the first test spent them; spend any left), then
    // send 2 MB bodies whose reads are counted.
    fake = wordWorker();
    for (let i = 0; i < 3; i++)
      await call("/v1/messages", { method: "POST", key: "sk-test-limited", body: messagesBody() });
    const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
    const send = async (declared: boolean) => {
      let pulls = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulls++;
          if (pulls > 32) controller.close();
          else controller.enqueue(chunk);
        },
      });
      const headers: Record<string, string> = { "x-api-key": "sk-test-limited", "content-type": "application/json" };
      if (declared) headers["content-length"] = "2097152";
      const refused = await exports.default.fetch(
        new Request("http://edge.test/v1/messages", { method: "POST", headers, body }),
      );
      expect(refused.status).toBe(429);
      return pulls;
    };
    // Declared: nothing is read. The runtime may pull ahead when the stream is handed over: one
    // chunk in workerd 1.20260426, two (128 KiB here) in 1.20260815 (@cloudflare/vitest-plugin 1.5).
    expect(await send(true)).toBeLessThanOrEqual(2);
    // Undeclared (chunked): the first MiB is read while the limiter answers, no more.
    expect(await send(false)).toBeLessThanOrEqual(18);
  });

  it("a tenant at its concurrency waits for the stream in flight to end", async () => {
    let finish: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    fake = installFakeWorker(async function* () {
      yield event({
        case: "prompt",
        value: { promptTokens: 1, cachedTokens: 0, decision: CacheDecision.COLD, messageId: "" },
      });
      await held;
      yield event({ case: "stop", value: { usage: { inputTokens: 1, cachedTokens: 0, outputTokens: 0 } } });
    });
    const streaming = await call("/v1/messages", {
      method: "POST",
      key: "sk-test-solo",
      body: messagesBody({ stream: true }),
    });
    expect(streaming.status).toBe(200);
    const second = await call("/v1/messages", { method: "POST", key: "sk-test-solo", body: messagesBody() });
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("1");
    expect(((await second.json()) as { error: { message: string } }).error.message).toMatch(/1 requests in flight/);
    finish();
    await streaming.arrayBuffer();
    // The slot came back when the stream ended (its settlement runs in waitUntil).
    await waitForGlobalWaitUntil();
    const third = await call("/v1/messages", { method: "POST", key: "sk-test-solo", body: messagesBody() });
    expect(third.status).toBe(200);
    await third.arrayBuffer();
  });
});
