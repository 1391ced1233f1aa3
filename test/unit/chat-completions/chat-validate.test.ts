/** Chat Completions request validation and normalisation into the neutral conversation. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { toChatConversation, toChatSampling } from "../../../edge/protocols/chat/normalize.ts";
import { collectChatRoutingIds } from "../../../edge/protocols/chat/routing-ids.ts";
import { validateChatRequest } from "../../../edge/protocols/chat/validate.ts";
import { Role, ThinkingMode, ToolChoiceMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
const bash = { type: "function", function: { name: "Bash", parameters: { type: "object" } } };

function refusal(body: Record<string, unknown>): string {
  try {
    validateChatRequest({ ...base, ...body });
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
  throw new Error("accepted");
}

const toolLoop = [
  { role: "system", content: "You are terse." },
  {
    role: "user",
    content: [
      { type: "text", text: "list " },
      { type: "text", text: "files" },
    ],
  },
  {
    role: "assistant",
    content: null,
    reasoning_content: "I should run ls",
    tool_calls: [
      { id: "call_1", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
      { id: "call_2", type: "function", function: { name: "Bash", arguments: '{"command":"pwd"}' } },
    ],
  },
  { role: "tool", tool_call_id: "call_2", content: "/tmp" },
  { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "a.txt" }] },
];

describe("validateChatRequest", () => {
  it("types a tool loop with every sampling field", () => {
    const request = validateChatRequest({
      model: "m",
      messages: toolLoop,
      tools: [bash],
      tool_choice: { type: "function", function: { name: "Bash" } },
      parallel_tool_calls: false,
      max_tokens: 50,
      max_completion_tokens: 40,
      temperature: 0.5,
      top_p: 0.9,
      seed: 7,
      stop: "END",
      reasoning_effort: "low",
      stream: true,
      stream_options: { include_usage: true },
      prompt_cache_key: "conv-1",
      n: 1,
      logprobs: false,
      presence_penalty: 0,
      store: true,
      metadata: { a: "b" },
      user: "u",
    });
    expect(request).toMatchObject({
      maxTokens: 40,
      stop: ["END"],
      seed: 7,
      toolChoice: { name: "Bash" },
      parallelToolCalls: false,
      includeUsage: true,
      promptCacheKey: "conv-1",
    });
    expect(request.messages[1]).toEqual({ role: "user", text: "list files" });
    expect(request.messages[2]).toMatchObject({ role: "assistant", text: "", reasoning: "I should run ls" });
  });

  it.each([
    [{ n: 2 }, "n: Only one choice"],
    [{ logprobs: true }, "logprobs: Log probabilities are not supported"],
    [{ top_logprobs: 2 }, "top_logprobs:"],
    [{ audio: { voice: "alloy", format: "wav" } }, "audio: Audio output is not supported"],
    [{ modalities: ["text", "audio"] }, "modalities.1:"],
    [{ frequency_penalty: 0.5 }, "frequency_penalty:"],
    [{ logit_bias: { "50256": -100 } }, "logit_bias:"],
    [{ functions: [] }, "functions:"],
    [
      { tools: [{ type: "custom", custom: { name: "x" } }] },
      "tools.0.type: Custom (freeform) tools are not served on /v1/chat/completions yet",
    ],
    [{ tool_choice: { type: "function", function: { name: "Nope" } }, tools: [bash] }, "tool_choice.function.name:"],
    [
      { messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:" } }] }] },
      "messages.0.content.0.type: Content part 'image_url' is not supported",
    ],
    [{ messages: [{ role: "tool", content: "x" }] }, "messages.0.tool_call_id: Field required"],
    [{ messages: [] }, "messages: List should have at least 1 item"],
    [{ stop: ["a", "b", "c", "d", "e"] }, "stop: At most 4"],
    [{ response_format: { type: "xml" } }, "response_format.type:"],
    [{ response_format: { type: "json_schema" } }, "response_format.json_schema: Field required"],
    [{ response_format: { type: "json_schema", json_schema: {} } }, "response_format.json_schema.name: Field required"],
    [
      { response_format: { type: "json_schema", json_schema: { name: "a b" } } },
      "response_format.json_schema.name: String should match pattern",
    ],
    [
      { response_format: { type: "json_schema", json_schema: { name: "a", schema: [1] } } },
      "response_format.json_schema.schema: Input should be an object",
    ],
    [
      { response_format: { type: "json_schema", json_schema: { name: "a", strict: "yes" } } },
      "response_format.json_schema.strict: Input should be a valid boolean",
    ],
    [
      { response_format: { type: "json_schema", json_schema: { name: "a", description: 5 } } },
      "response_format.json_schema.description:",
    ],
  ])("refuses %j naming the field", (body, message) => {
    expect(refusal(body)).toContain(message);
  });
});

describe("toChatConversation", () => {
  it("merges the tool messages into one user turn and keeps the replayed assistant turn whole", () => {
    const request = validateChatRequest({ model: "m", messages: toolLoop, tools: [bash], reasoning_effort: "low" });
    const conversation = toChatConversation(request);
    expect(conversation.system).toEqual(["You are terse."]);
    expect(conversation.messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER]);
    expect(conversation.messages[1]?.content.map((c) => c.block.case)).toEqual(["thinking", "toolUse", "toolUse"]);
    const results = conversation.messages[2]?.content.map((c) =>
      c.block.case === "toolResult" ? c.block.value : undefined,
    );
    expect(results?.map((r) => [r?.toolUseId, r?.content])).toEqual([
      ["call_2", "/tmp"],
      ["call_1", "a.txt"],
    ]);
    expect(conversation.tools[0]).toMatchObject({ name: "Bash", inputSchemaJson: '{"type":"object"}' });
    expect(conversation.thinking?.mode).toBe(ThinkingMode.ENABLED);
    expect(conversation.toolChoice?.mode).toBe(ToolChoiceMode.AUTO);
  });

  it("keeps a late system message in place and maps tool_choice required to any", () => {
    const request = validateChatRequest({
      model: "m",
      messages: [
        { role: "developer", content: "rules" },
        { role: "user", content: "a" },
        { role: "system", content: "late" },
      ],
      tools: [bash],
      tool_choice: "required",
      stop: ["x", "y"],
      seed: 3,
    });
    const conversation = toChatConversation(request);
    expect(conversation.system).toEqual(["rules"]);
    expect(conversation.messages.map((m) => m.role)).toEqual([Role.USER, Role.SYSTEM]);
    expect(conversation.toolChoice?.mode).toBe(ToolChoiceMode.ANY);
    expect(conversation.thinking?.mode).toBe(ThinkingMode.DISABLED);
    expect(toChatSampling(request)).toMatchObject({ stopSequences: ["x", "y"], seed: 3n, maxTokens: 0 });
  });
});

describe("collectChatRoutingIds", () => {
  it("takes the trailing tool messages' ids and the replayed tool calls, latest first", () => {
    const request = validateChatRequest({ model: "m", messages: toolLoop });
    expect(collectChatRoutingIds(request.messages)).toEqual({
      toolResults: ["call_2", "call_1"],
      replayed: [["call_1", "call_2"]],
      firstTurn: false,
      assistantTurns: 1,
    });
    const first = validateChatRequest(base);
    expect(collectChatRoutingIds(first.messages)).toEqual({
      toolResults: [],
      replayed: [],
      firstTurn: true,
      assistantTurns: 0,
    });
  });
});

describe("chatcmpl IDs", () => {
  it("are minted and verified like every other kind, spelled chatcmpl-", async () => {
    const { mintId, newSessionId, verifyId } = await import("../../../shared/ids.ts");
    const session = newSessionId();
    const id = await mintId("s3cret", "chatcmpl", "local", session);
    expect(id).toMatch(/^chatcmpl-[A-Za-z0-9_-]{47}$/);
    expect(await verifyId("s3cret", id, "local")).toEqual({ kind: "chatcmpl", session });
    expect(await verifyId("s3cret", id, "other-tenant")).toBeUndefined();
    expect(await verifyId("s3cret", id.replace("chatcmpl-", "chatcmpl_"), "local")).toBeUndefined();
  });
});
