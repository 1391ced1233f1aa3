import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";

const base = { model: "frontier-test", max_tokens: 64, messages: [{ role: "user", content: "hi" }] };

function errorOf(body: unknown, requireMaxTokens = true): string {
  try {
    validateMessagesRequest(body, { requireMaxTokens });
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
  throw new Error("expected a validation error");
}

describe("validateMessagesRequest errors name the field path", () => {
  const cases: [string, unknown, string][] = [
    ["not an object", [], "The request body must be a JSON object"],
    ["missing model", { ...base, model: undefined }, "model: Field required"],
    ["empty model", { ...base, model: "" }, "model: String should have at least 1 character"],
    ["missing max_tokens", { ...base, max_tokens: undefined }, "max_tokens: Field required"],
    ["max_tokens 0", { ...base, max_tokens: 0 }, "max_tokens: Input should be greater than or equal to 1"],
    ["max_tokens float", { ...base, max_tokens: 1.5 }, "max_tokens: Input should be a valid integer"],
    ["missing messages", { ...base, messages: undefined }, "messages: Field required"],
    ["empty messages", { ...base, messages: [] }, "messages: At least one message is required"],
    [
      "bad role",
      { ...base, messages: [{ role: "tool", content: "x" }] },
      "messages.0.role: Input should be 'user', 'assistant' or 'system'",
    ],
    [
      "content number",
      { ...base, messages: [{ role: "user", content: 3 }] },
      "messages.0.content: Input should be a valid string or a list of content blocks",
    ],
    [
      "block without type",
      { ...base, messages: [{ role: "user", content: [{ text: "x" }] }] },
      "messages.0.content.0.type: Field required",
    ],
    [
      "tool_result without id",
      {
        ...base,
        messages: [
          { role: "user", content: "go" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }] },
          { role: "user", content: [{ type: "tool_result", content: "ok" }] },
        ],
      },
      "messages.2.content.0.tool_use_id: Field required",
    ],
    [
      "tool_use input not an object",
      { ...base, messages: [{ role: "assistant", content: [{ type: "tool_use", id: "t", name: "n", input: "x" }] }] },
      "messages.0.content.0.input: Input should be an object",
    ],
    [
      "tool_result text block without text",
      {
        ...base,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: [{ type: "text" }] }] }],
      },
      "messages.0.content.0.content.0.text: Field required",
    ],
    [
      "image block",
      { ...base, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", data: "" } }] }] },
      "messages.0.content.0: image content blocks are not supported by this model; send text instead",
    ],
    ["temperature > 1", { ...base, temperature: 1.5 }, "temperature: Input should be less than or equal to 1"],
    ["top_p string", { ...base, top_p: "0.5" }, "top_p: Input should be a valid number"],
    ["stream string", { ...base, stream: "yes" }, "stream: Input should be a valid boolean"],
    ["system block not text", { ...base, system: [{ type: "image" }] }, "system.0.type: Input should be 'text'"],
    ["tool without schema", { ...base, tools: [{ name: "Bash" }] }, "tools.0.input_schema: Field required"],
    [
      "duplicate tool",
      {
        ...base,
        tools: [
          { name: "A", input_schema: {} },
          { name: "A", input_schema: {} },
        ],
      },
      "tools.1.name: Tool names must be unique; 'A' appears more than once",
    ],
    [
      "tool_choice unknown tool",
      { ...base, tool_choice: { type: "tool", name: "Nope" } },
      "tool_choice.name: Tool 'Nope' not found in tools",
    ],
    [
      "tool_choice bad type",
      { ...base, tool_choice: { type: "some" } },
      "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'",
    ],
    ["thinking without budget", { ...base, thinking: { type: "enabled" } }, "thinking.budget_tokens: Field required"],
    [
      "too many stop sequences",
      { ...base, stop_sequences: Array.from({ length: 17 }, (_, i) => `s${i}`) },
      "stop_sequences: At most 16 stop sequences are allowed",
    ],
    [
      "empty stop sequence",
      { ...base, stop_sequences: [""] },
      "stop_sequences.0: String should have between 1 and 256 characters",
    ],
  ];
  for (const [name, body, message] of cases) {
    it(name, () => expect(errorOf(body)).toBe(message));
  }
});

describe("validateMessagesRequest accepts", () => {
  it("count_tokens bodies without max_tokens", () => {
    expect(
      validateMessagesRequest({ ...base, max_tokens: undefined }, { requireMaxTokens: false }).max_tokens,
    ).toBeUndefined();
  });

  it("unknown fields, nulls, cache_control, metadata, output_config and context_management", () => {
    const parsed = validateMessagesRequest(
      {
        ...base,
        temperature: null,
        future_field: 1,
        metadata: { user_id: "u" },
        output_config: { effort: "high" },
        context_management: { edits: [] },
        messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
      },
      { requireMaxTokens: true },
    );
    expect(parsed.temperature).toBeUndefined();
    expect(parsed.messages[0]?.content).toEqual([{ type: "text", text: "hi" }]);
  });

  it("a Claude Code shaped request", () => {
    const parsed = validateMessagesRequest(
      {
        model: "claude-sonnet-4-5",
        max_tokens: 32000,
        stream: true,
        thinking: { type: "adaptive" },
        system: [
          { type: "text", text: "x-anthropic-billing-header: cc_version=2.1; cch=abc" },
          { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
        ],
        tools: [
          { name: "Bash", description: "Run a command", input_schema: { type: "object", properties: {} } },
          { type: "web_search_20250305", name: "web_search", max_uses: 5 },
        ],
        messages: [
          { role: "system", content: "reminder" },
          { role: "user", content: "list files" },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "hmm", signature: "sig" },
              { type: "redacted_thinking", data: "opaque" },
              {
                type: "server_tool_use",
                id: "srvtoolu_1",
                name: "web_search",
                input: { q: "x" },
                cache_control: { type: "ephemeral" },
              },
              { type: "tool_use", id: "toolu_a", name: "Bash", input: { command: "ls" } },
            ],
          },
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "a\nb", is_error: false }],
          },
        ],
      },
      { requireMaxTokens: true },
    );
    expect(parsed.system).toEqual(["You are Claude Code."]);
    expect(parsed.tools.map((t) => t.name)).toEqual(["Bash"]);
    expect(parsed.thinking).toEqual({ type: "adaptive" });
    expect(parsed.messages[0]?.role).toBe("system");
    expect(parsed.messages[2]?.content).toEqual([
      { type: "thinking", thinking: "hmm", signature: "sig", foreign: true },
      { type: "redacted_thinking", data: "opaque", json: '{"type":"redacted_thinking","data":"opaque"}' },
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { q: "x" } },
      { type: "tool_use", id: "toolu_a", name: "Bash", input: { command: "ls" } },
    ]);
  });
});
