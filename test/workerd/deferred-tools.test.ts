/**
 * Anthropic deferred tools through the edge: the worker receives only the tools not deferred plus
 * the deferred ones a `tool_reference` loaded (as referenced_tools, outside the header); invalid
 * requests get Anthropic's 400; the tool search server tools are named as not offered.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, type ErrorBody, messagesBody } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

const schema = { type: "object", properties: { city: { type: "string" } } };
const tools = [
  { name: "ToolSearch", description: "Loads deferred tools", input_schema: schema },
  { name: "get_weather", description: "Weather", input_schema: schema, defer_loading: true },
  { name: "get_time", description: "Time", input_schema: schema, defer_loading: true },
];

function textWorker(): FakeWorker {
  return installFakeWorker(async function* ({ request }) {
    const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
    yield event({
      case: "prompt",
      value: { promptTokens: 20, cachedTokens: 0, decision: CacheDecision.COLD, messageId },
    });
    yield event({ case: "textDelta", value: { text: "ok" } });
    yield event({
      case: "stop",
      value: { reason: StopReason.END_TURN, usage: { inputTokens: 20, cachedTokens: 0, outputTokens: 1 } },
    });
  });
}

const headers = { "anthropic-version": "2023-06-01", "anthropic-beta": "advanced-tool-use-2025-11-20" };

describe("deferred tools (defer_loading, tool_reference)", () => {
  it("sends the worker only the tools not deferred, then a referenced one as callable outside the header", async () => {
    fake = textWorker();
    const first = await call("/v1/messages", { method: "POST", headers, body: messagesBody({ tools }) });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const firstConversation = fake.requests[0]?.conversation;
    expect(firstConversation?.tools.map((t) => t.name)).toEqual(["ToolSearch"]);
    expect(firstConversation?.referencedTools).toEqual([]);

    const messages = [
      { role: "user", content: "weather?" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "ToolSearch", input: { city: "w" } }] },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_x",
            content: [{ type: "tool_reference", tool_name: "get_weather" }],
          },
        ],
      },
    ];
    const second = await call("/v1/messages", { method: "POST", headers, body: messagesBody({ tools, messages }) });
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    const conversation = fake.requests[1]?.conversation;
    expect(conversation?.tools.map((t) => t.name)).toEqual(["ToolSearch"]);
    expect(conversation?.referencedTools.map((t) => t.name)).toEqual(["get_weather"]);
    const result = conversation?.messages[2]?.content[0]?.block;
    expect(result?.case === "toolResult" && result.value.content).toBe(
      `Tool loaded: ${JSON.stringify({ name: "get_weather", description: "Weather", input_schema: schema })}`,
    );
  });

  it("answers Anthropic's 400 when every tool is deferred or a reference names no tool", async () => {
    const allDeferred = await call("/v1/messages", {
      method: "POST",
      headers,
      body: messagesBody({ tools: tools.slice(1) }),
    });
    expect(allDeferred.status).toBe(400);
    const body = (await allDeferred.json()) as ErrorBody;
    expect(body.type).toBe("error");
    expect(body.error).toEqual({
      type: "invalid_request_error",
      message: "tools: All tools have defer_loading set. At least one tool must be non-deferred.",
    });

    const unknown = await call("/v1/messages/count_tokens", {
      method: "POST",
      headers,
      body: {
        model: "m",
        tools,
        messages: [
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "t", content: [{ type: "tool_reference", tool_name: "nope" }] },
            ],
          },
        ],
      },
    });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as ErrorBody).error.message).toBe(
      "messages.0.content.0.content.0.tool_name: Tool reference 'nope' has no corresponding tool definition",
    );
  });

  it("names a declared tool search server tool in x-frontier-tools-not-offered", async () => {
    fake = textWorker();
    const search = { type: "tool_search_tool_bm25_20251119", name: "tool_search_tool_bm25" };
    const response = await call("/v1/messages", {
      method: "POST",
      headers,
      body: messagesBody({ tools: [search, ...tools.slice(1)] }),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(response.headers.get("x-frontier-tools-not-offered")).toBe("tool_search_tool_bm25_20251119");
    expect(fake.requests[0]?.conversation?.tools).toEqual([]);
  });
});
