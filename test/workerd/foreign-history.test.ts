/**
 * Histories Frontier did not write, through the real edge in workerd (fake worker): a Responses
 * record keeps the client's foreign items verbatim, so a `previous_response_id` replay hands the
 * worker exactly what the first request did; malformed foreign blocks are 400s in each protocol's
 * own error shape, naming the field.
 */

import { env } from "cloudflare:workers";
import { toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, MessageSchema, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, type ErrorBody, messagesBody } from "./helpers.ts";
import { sealedStore } from "./response-fixtures.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

function answers(text: string) {
  return installFakeWorker(async function* ({ request }) {
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: 30, messageId, decision: CacheDecision.COLD } });
    yield event({ case: "textDelta", value: { text } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage: { inputTokens: 30, outputTokens: 1 } } });
  });
}

const CIPHER = `gAAAAABp${"Zq9r".repeat(200)}`;
const foreignItems = [
  { role: "user", content: "What is new?" },
  {
    type: "reasoning",
    id: "rs_other",
    summary: [{ type: "summary_text", text: "search first" }],
    encrypted_content: CIPHER,
  },
  {
    type: "web_search_call",
    id: "ws_other",
    status: "completed",
    action: { type: "search", query: "frontier release", sources: [{ type: "url", url: "https://a.example/x" }] },
  },
  { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hosted tools shipped." }] },
  { role: "user", content: "Thanks" },
];

describe("foreign items in stored Responses history", () => {
  it("replays from previous_response_id exactly what the client sent", async () => {
    fake = answers("ok");
    const first = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: { model: "frontier-test", input: foreignItems, store: true },
    });
    expect(first.status).toBe(200);
    const { id } = (await first.json()) as { id: string };
    const second = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: { model: "frontier-test", input: "And then?", previous_response_id: id },
    });
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    const [a, b] = fake.requests.map((r) => r.conversation?.messages ?? []);
    if (!a || !b) throw new Error("two Generate calls expected");
    // The first request's messages come back byte for byte (proto encoding), then the stored answer.
    expect(b.slice(0, a.length).map((m) => toBinary(MessageSchema, m))).toEqual(
      a.map((m) => toBinary(MessageSchema, m)),
    );
    const blocks = a[1]?.content.map((c) => c.block) ?? [];
    expect(blocks.map((x) => x.case)).toEqual(["opaque", "serverToolUse", "serverToolResult", "text"]);
    expect(blocks[0]).toMatchObject({ value: { anchor: CIPHER, text: "[reasoning from another model] search first" } });
    // The stored record holds the client's web_search_call item itself.
    const session = fake.requests[0]?.sessionId ?? "";
    const history = await sealedStore(session).history("local", id);
    expect(history.status).toBe("ok");
    const stored = history.status === "ok" ? history.items.find((item) => item.type === "web_search_call") : undefined;
    expect(stored).toMatchObject({ json: JSON.stringify(foreignItems[2]) });
  });

  it("answers a malformed web_search_call with OpenAI's 400 naming the field", async () => {
    const response = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      body: { model: "frontier-test", input: [{ type: "web_search_call", id: "ws_1", action: { type: "search" } }] },
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; param: string; message: string } };
    expect(body.error).toMatchObject({ type: "invalid_request_error", param: "input.0.action.query" });
  });
});

describe("foreign blocks in a Messages history", () => {
  it("answers a malformed web_search_tool_result with Anthropic's 400 naming the field", async () => {
    const messages = [
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_1",
            content: [{ type: "web_search_result", url: "u", title: "t" }],
          },
        ],
      },
      { role: "user", content: "go on" },
    ];
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ messages }) });
    expect(response.status).toBe(400);
    const body = (await response.json()) as ErrorBody;
    expect(body.type).toBe("error");
    expect(body.error).toEqual({
      type: "invalid_request_error",
      message: "messages.1.content.1.content.0.encrypted_content: Field required",
    });
  });
});
