/** Anthropic deferred tools (`defer_loading`) and `tool_reference`: validation and normalisation. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { toConversation, toolReferenceText } from "../../../edge/protocols/messages/request/normalize.ts";
import { validateMessagesRequest } from "../../../edge/protocols/messages/request/validate.ts";

const schema = { type: "object", properties: { q: { type: "string" } } };
const tools = [
  { name: "ToolSearch", description: "find tools", input_schema: schema },
  { name: "get_weather", description: "weather", input_schema: schema, defer_loading: true },
  { name: "get_time", description: "time", input_schema: schema, defer_loading: true },
];

/** A history whose tool result holds `parts` (after a ToolSearch call). */
function withResult(parts: unknown[], extra: Record<string, unknown> = {}) {
  return {
    model: "m",
    max_tokens: 64,
    tools,
    messages: [
      { role: "user", content: "weather?" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { q: "w" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: parts }] },
    ],
    ...extra,
  };
}

function errorOf(body: unknown): string {
  try {
    validateMessagesRequest(body, { requireMaxTokens: true });
  } catch (error) {
    if (error instanceof ValidationError) return error.message;
    throw error;
  }
  throw new Error("expected a validation error");
}

const reference = (name: string) => ({ type: "tool_reference", tool_name: name });

describe("deferred tools: validation (Anthropic's rules)", () => {
  it("refuses a request whose every tool is deferred", () => {
    const body = { model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }], tools: tools.slice(1) };
    expect(errorOf(body)).toBe("tools: All tools have defer_loading set. At least one tool must be non-deferred.");
  });

  it("counts a declared tool search tool as a non-deferred tool, and never defers it", () => {
    const search = { type: "tool_search_tool_regex_20251119", name: "tool_search_tool_regex" };
    const ok = validateMessagesRequest(
      { model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }], tools: [search, ...tools.slice(1)] },
      { requireMaxTokens: true },
    );
    expect(ok.tools_not_offered).toEqual(["tool_search_tool_regex_20251119"]);
    const deferred = { ...search, defer_loading: true };
    expect(
      errorOf({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }], tools: [deferred, tools[0]] }),
    ).toBe("tools.0.defer_loading: The tool search tool cannot be deferred");
  });

  it("names a tool_reference to an undeclared tool", () => {
    expect(errorOf(withResult([reference("nope")]))).toBe(
      "messages.2.content.0.content.0.tool_name: Tool reference 'nope' has no corresponding tool definition",
    );
  });

  it("requires tool_name on a tool_reference and a boolean defer_loading", () => {
    expect(errorOf(withResult([{ type: "tool_reference" }]))).toBe(
      "messages.2.content.0.content.0.tool_name: Field required",
    );
    const bad = {
      model: "m",
      max_tokens: 8,
      messages: [{ role: "user", content: "x" }],
      tools: [{ ...tools[0], defer_loading: "yes" }],
    };
    expect(errorOf(bad)).toBe("tools.0.defer_loading: Input should be a valid boolean");
  });

  it("refuses to force a deferred tool no reference loaded, and allows it once loaded", () => {
    const forced = { tool_choice: { type: "tool", name: "get_time" } };
    expect(errorOf(withResult([reference("get_weather")], forced))).toMatch(
      /^tool_choice\.name: Tool 'get_time' has defer_loading set and no tool_reference has loaded it/,
    );
    expect(() =>
      validateMessagesRequest(withResult([reference("get_time")], forced), { requireMaxTokens: true }),
    ).not.toThrow();
  });
});

describe("deferred tools: normalisation", () => {
  it("keeps deferred tools out of the header until referenced", () => {
    const first = toConversation(
      validateMessagesRequest(
        { model: "m", max_tokens: 8, messages: [{ role: "user", content: "x" }], tools },
        { requireMaxTokens: true },
      ),
    );
    expect(first.tools.map((t) => t.name)).toEqual(["ToolSearch"]);
    expect(first.referencedTools).toEqual([]);
  });

  it("loads a referenced tool as callable and renders its definition where the reference is", () => {
    const request = validateMessagesRequest(withResult([{ type: "text", text: "found:" }, reference("get_weather")]), {
      requireMaxTokens: true,
    });
    const conversation = toConversation(request);
    expect(conversation.tools.map((t) => t.name)).toEqual(["ToolSearch"]);
    expect(conversation.referencedTools.map((t) => [t.name, t.inputSchemaJson])).toEqual([
      ["get_weather", JSON.stringify(schema)],
    ]);
    const result = conversation.messages[2]?.content[0]?.block;
    expect(result?.case).toBe("toolResult");
    const loaded = `Tool loaded: {"name":"get_weather","description":"weather","input_schema":${JSON.stringify(schema)}}`;
    expect(result?.case === "toolResult" ? result.value.content : "").toBe(`found:\n${loaded}`);
  });

  it("is append-only: the header of the turn before the reference is unchanged", () => {
    const before = toConversation(
      validateMessagesRequest(withResult(["plain"].map((text) => ({ type: "text", text }))), {
        requireMaxTokens: true,
      }),
    );
    const after = toConversation(
      validateMessagesRequest(withResult([reference("get_time")]), { requireMaxTokens: true }),
    );
    expect(after.tools).toEqual(before.tools);
    expect(after.system).toEqual(before.system);
    expect(after.referencedTools.map((t) => t.name)).toEqual(["get_time"]);
  });

  it("renders a reference to a non-client tool by its name", () => {
    expect(toolReferenceText("web_search", undefined)).toBe("Tool loaded: web_search");
  });
});
