import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, type ErrorBody, messagesBody } from "./helpers.ts";

async function expectError(response: Response, status: number, type: string): Promise<ErrorBody> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const requestId = response.headers.get("request-id");
  expect(requestId).toMatch(/^req_[0-9A-Za-z]{24}$/);
  const body = (await response.json()) as ErrorBody;
  expect(body.type).toBe("error");
  expect(body.error.type).toBe(type);
  expect(body.request_id).toBe(requestId);
  return body;
}

describe("routes", () => {
  it("answers HEAD / and GET / without auth", async () => {
    const head = await call("/", { method: "HEAD", key: null });
    expect(head.status).toBe(200);
    expect(head.headers.get("request-id")).toMatch(/^req_/);
    const get = await call("/", { key: null });
    expect(get.status).toBe(200);
    await get.text();
  });

  it("answers unknown routes with not_found_error", async () => {
    const body = await expectError(await call("/v1/nope", { key: null }), 404, "not_found_error");
    expect(body.error.message).toContain("/v1/nope");
  });

  it("answers wrong methods on known paths with 405", async () => {
    const response = await call("/v1/messages", { method: "GET" });
    expect(response.headers.get("allow")).toBe("POST");
    await expectError(response, 405, "invalid_request_error");
    await expectError(await call("/v1/models", { method: "POST", body: {} }), 405, "invalid_request_error");
    await expectError(await call("/", { method: "DELETE", key: null }), 405, "invalid_request_error");
  });

  it("gives every response a fresh request-id", async () => {
    const a = await call("/", { key: null });
    const b = await call("/", { key: null });
    expect(a.headers.get("request-id")).not.toBe(b.headers.get("request-id"));
  });
});

describe("auth", () => {
  // An Anthropic client (it sends anthropic-version) gets Anthropic's error shape on /v1/models.
  const headers = { "anthropic-version": "2023-06-01" };

  it("requires a key", async () => {
    const body = await expectError(await call("/v1/models", { key: null, headers }), 401, "authentication_error");
    expect(body.error.message).toContain("x-api-key");
  });

  it("rejects an unknown key", async () => {
    await expectError(await call("/v1/models", { key: "sk-wrong", headers }), 401, "authentication_error");
    const bearer = await call("/v1/models", { key: "sk-wrong", bearer: true, headers });
    await expectError(bearer, 401, "authentication_error");
  });

  it("accepts x-api-key and Authorization: Bearer", async () => {
    for (const bearer of [false, true]) {
      const response = await call("/v1/models", { bearer });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        object: "list",
        data: [
          {
            type: "model",
            id: "frontier-test",
            display_name: "frontier-test",
            created_at: "2026-01-01T00:00:00Z",
            object: "model",
            created: 1767225600,
            owned_by: "frontier",
          },
        ],
        has_more: false,
        first_id: "frontier-test",
        last_id: "frontier-test",
      });
    }
  });

  it("serves GET /v1/models/:id", async () => {
    expect((await call("/v1/models/frontier-test")).status).toBe(200);
    await expectError(await call("/v1/models/claude-x"), 404, "not_found_error");
  });
});

describe("request bodies", () => {
  it("rejects invalid JSON with 400", async () => {
    const body = await expectError(
      await call("/v1/messages", { method: "POST", body: "{nope" }),
      400,
      "invalid_request_error",
    );
    expect(body.error.message).toContain("not valid JSON");
  });

  it("names the failing field", async () => {
    const request = messagesBody({
      messages: [
        { role: "user", content: "run it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }] },
        { role: "user", content: [{ type: "tool_result", content: "ok" }] },
      ],
    });
    const body = await expectError(
      await call("/v1/messages", { method: "POST", body: request }),
      400,
      "invalid_request_error",
    );
    expect(body.error.message).toBe("messages.2.content.0.tool_use_id: Field required");
  });

  it("rejects a body over 32 MB by content-length and by bytes read", async () => {
    const big = "x".repeat(32 * 1024 * 1024 + 1);
    await expectError(await call("/v1/messages", { method: "POST", body: big }), 413, "request_too_large");
    // No content-length: the edge must count the bytes it reads and stop at the limit.
    let sent = 0;
    const chunk = new Uint8Array(1024 * 1024).fill(0x20);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 40) controller.close();
        else {
          sent++;
          controller.enqueue(chunk);
        }
      },
    });
    const response = await exports.default.fetch(
      new Request("http://edge.test/v1/messages", {
        method: "POST",
        headers: { "x-api-key": "sk-frontier-local", "content-type": "application/json" },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
    await expectError(response, 413, "request_too_large");
    expect(sent).toBeLessThan(40);
  });

  it("accepts unknown fields and beta headers (fails later, at the unreachable worker)", async () => {
    const request = messagesBody({
      some_future_field: { nested: true },
      context_management: { edits: [] },
      output_config: { effort: "high" },
      metadata: { user_id: '{"session":"x"}' },
      system: [
        { type: "text", text: "x-anthropic-billing-header: cc_version=1" },
        { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      ],
    });
    const response = await call("/v1/messages?beta=true", {
      method: "POST",
      body: request,
      headers: {
        "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14",
        "anthropic-version": "2023-06-01",
      },
    });
    const body = await expectError(response, 529, "overloaded_error");
    expect(response.headers.get("retry-after")).toBeTruthy();
    expect(response.headers.get("x-should-retry")).toBe("true");
    expect(body.error.message).toContain("unavailable");
  });

  it("count_tokens does not require max_tokens and reports an unreachable worker as 529", async () => {
    const { max_tokens: _drop, ...request } = messagesBody();
    await expectError(
      await call("/v1/messages/count_tokens", { method: "POST", body: request }),
      529,
      "overloaded_error",
    );
  });
});
