/**
 * Codex 0.171's default-model request shapes: `additional_tools` (tools made available at an item),
 * `configuration_update` (settings for the responses after it) and namespaced custom tools. A
 * leading item's tools are the header's; a later item's render in place and are callable from there,
 * so the earlier prompt is a byte prefix of the later one in every chat family. Unknown item types
 * stay a 400 naming the type.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { applyConfigurationUpdates } from "../../../edge/protocols/responses/request/configuration-updates.ts";
import { toConversation, toWorkerTurn } from "../../../edge/protocols/responses/request/normalize.ts";
import { collectResponsesRoutingIds } from "../../../edge/protocols/responses/request/routing-ids.ts";
import type { InputItem, OutputItem } from "../../../edge/protocols/responses/request/types.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { outputAsInput } from "../../../edge/protocols/responses/response/response-object.ts";
import { ResponsesTurn } from "../../../edge/protocols/responses/response/stream.ts";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import {
  GenerateEventSchema,
  Role,
  StopReason,
  ThinkingMode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId } from "../../../shared/ids.ts";
import {
  CODEX_DEFAULT_EXEC_CALL,
  CODEX_DEFAULT_EXEC_OUTPUT,
  CODEX_DEFAULT_FIRST_INPUT,
  codexDefaultBody,
} from "./codex-default-request.ts";
import { decodeSseText } from "./sse-text.ts";

const validate = (input: unknown[], extra: Record<string, unknown> = {}) =>
  validateResponsesRequest({ ...codexDefaultBody(input), ...extra });

/** The whole conversation as the adapter renders it: the settings in effect, then the items. */
const conversationOf = (input: unknown[]) => {
  const request = validate(input);
  const effective = applyConfigurationUpdates(request, request.input);
  return toConversation(effective, request.input);
};

const MCP_TOOLS = {
  type: "additional_tools",
  role: "developer",
  tools: [
    {
      type: "namespace",
      name: "mcp__docs",
      description: "Docs server",
      tools: [
        {
          type: "function",
          name: "search",
          description: "Search the docs",
          parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
        },
      ],
    },
  ],
};

function invalid(input: unknown[], extra: Record<string, unknown> = {}): { path: string; message: string } {
  try {
    validate(input, extra);
  } catch (error) {
    const e = error as { path?: (string | number)[]; message: string };
    return { path: (e.path ?? []).join("."), message: e.message };
  }
  throw new Error("expected a validation error");
}

describe("Codex 0.171's default-model request", () => {
  it("validates as sent: the leading additional_tools item is the header's tools, the configuration update renders nothing", () => {
    const request = validate(CODEX_DEFAULT_FIRST_INPUT);
    expect(request.tools).toEqual([]);
    const conversation = conversationOf(CODEX_DEFAULT_FIRST_INPUT);
    expect(conversation.tools.map((t) => t.name)).toEqual(["functions.exec", "functions.wait", "clock.sleep"]);
    expect(conversation.referencedTools).toEqual([]);
    // The code-mode exec tool is freeform: one raw-text input, constrained by its Lark grammar.
    expect(conversation.tools[0]?.inputGrammar).toMatchObject({ syntax: "lark" });
    expect(JSON.parse(conversation.tools[0]?.inputSchemaJson ?? "")).toMatchObject({ required: ["input"] });
    // The developer messages before the first turn are the system prompt; two user messages, one turn.
    expect(conversation.system).toEqual([
      "You are Codex, an agent based on GPT-6.",
      "<permissions instructions>read-only</permissions instructions>",
    ]);
    expect(conversation.messages.map((m) => m.role)).toEqual([Role.USER]);
  });

  it("renders the leading item's tools exactly as the same tools declared in `tools`", () => {
    const [toolsItem, ...rest] = CODEX_DEFAULT_FIRST_INPUT as [{ tools: unknown[] }, ...unknown[]];
    const declared = validateResponsesRequest({ ...codexDefaultBody(rest), tools: toolsItem.tools });
    const viaTools = toConversation(applyConfigurationUpdates(declared, declared.input), declared.input);
    const format = createChatFormat("qwen3", { chatTemplate: undefined });
    expect(format.render(conversationOf(CODEX_DEFAULT_FIRST_INPUT)).text).toBe(format.render(viaTools).text);
  });

  it("applies the last configuration_update's reasoning effort over the request's", () => {
    const high = { type: "configuration_update", reasoning: { effort: "high" } };
    const request = validate([...CODEX_DEFAULT_FIRST_INPUT, high], { reasoning: { effort: "none" } });
    expect(request.reasoning_effort).toBe("none");
    const effective = applyConfigurationUpdates(request, request.input);
    expect(effective.reasoning_effort).toBe("high");
    expect(toWorkerTurn(effective, request.input).conversation.thinking?.mode).toBe(ThinkingMode.ENABLED);
    // effort null returns to the request's own; no update leaves the request as it is.
    const reset = validate([
      ...CODEX_DEFAULT_FIRST_INPUT,
      high,
      { type: "configuration_update", reasoning: { effort: null } },
    ]);
    expect(applyConfigurationUpdates(reset, reset.input).reasoning_effort).toBe("low");
    const plain = validate(["hi"].map((text) => ({ role: "user", content: text })));
    expect(applyConfigurationUpdates(plain, plain.input)).toBe(plain);
    // text.format too: a JSON schema answer from here on.
    const json = { type: "configuration_update", text: { format: { type: "json_object" } } };
    const formatted = validate([...CODEX_DEFAULT_FIRST_INPUT, json]);
    expect(applyConfigurationUpdates(formatted, formatted.input).text_format).toEqual({ type: "json_object" });
  });

  it("reads the replayed namespaced custom call and its list output back into the call the model made", () => {
    const conversation = conversationOf([
      ...CODEX_DEFAULT_FIRST_INPUT,
      CODEX_DEFAULT_EXEC_CALL,
      CODEX_DEFAULT_EXEC_OUTPUT,
    ]);
    const [, assistant, results] = conversation.messages;
    expect(assistant?.content.map((c) => c.block.value)).toMatchObject([
      { id: "call_8", name: "functions.exec", inputJson: JSON.stringify({ input: CODEX_DEFAULT_EXEC_CALL.input }) },
    ]);
    expect(results?.content.map((c) => c.block.value)).toMatchObject([
      { toolUseId: "call_8", content: "Script completed\nWall time 1.0 seconds\nOutput:\nfrontier-one\n" },
    ]);
    // The developer-side items neither end nor start an assistant turn for routing.
    const request = validate([...CODEX_DEFAULT_FIRST_INPUT, CODEX_DEFAULT_EXEC_CALL, CODEX_DEFAULT_EXEC_OUTPUT]);
    expect(collectResponsesRoutingIds(request.input)).toMatchObject({ toolResults: ["call_8"], assistantTurns: 1 });
  });

  it("returns a call of functions.exec as a custom_tool_call named exec in namespace functions", async () => {
    const request = validate(CODEX_DEFAULT_FIRST_INPUT);
    const additional = request.input.flatMap((item) => (item.type === "additional_tools" ? item.tools : []));
    const turn = new ResponsesTurn(request, {
      idSecret: "unit-test-secret-0123456789",
      tenant: "local",
      sessionId: newSessionId(),
      createdAt: 1,
      additionalTools: additional,
    });
    const code = 'text("hi");';
    type Init = MessageInitShape<typeof GenerateEventSchema>["event"];
    const ev = (event: Init) => create(GenerateEventSchema, { event });
    let sse = "";
    for (const event of [
      ev({ case: "prompt", value: { promptTokens: 9, messageId: "resp_x" } }),
      ev({ case: "toolCallStart", value: { index: 0, id: "call_a", name: "functions.exec" } }),
      ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: JSON.stringify({ input: code }) } }),
      ev({ case: "toolCallEnd", value: { index: 0 } }),
      ev({ case: "stop", value: { reason: StopReason.TOOL_USE, usage: { outputTokens: 4 } } }),
    ])
      for (const out of await turn.push(event)) sse += out.sse;
    const events = decodeSseText(sse) as { type: string; item?: OutputItem }[];
    const done = events.filter((e) => e.type === "response.output_item.done").map((e) => e.item);
    expect(done).toMatchObject([{ type: "custom_tool_call", name: "exec", namespace: "functions", input: code }]);
    expect(outputAsInput(turn.body().output)).toMatchObject([{ type: "function_call", name: "functions.exec" }]);
  });
});

describe.each(CHAT_FAMILIES)("tools added mid-conversation, rendered by %s", (family) => {
  const format = createChatFormat(family, { chatTemplate: undefined });
  const history = [...CODEX_DEFAULT_FIRST_INPUT, CODEX_DEFAULT_EXEC_CALL, CODEX_DEFAULT_EXEC_OUTPUT];

  it("append their definitions in place as a developer message; the header and every earlier byte stay", () => {
    const before = conversationOf(history);
    const after = conversationOf([...history, MCP_TOOLS]);
    expect(after.tools).toEqual(before.tools);
    expect(after.referencedTools.map((t) => t.name)).toEqual(["mcp__docs.search"]);
    const last = after.messages.at(-1);
    expect(last?.role).toBe(Role.SYSTEM);
    const text = before.messages.length + 1 === after.messages.length ? last?.content[0]?.block.value : undefined;
    expect(text).toMatchObject({ text: expect.stringContaining('Tool loaded: {"name":"mcp__docs.search"') });
    const renderedBefore = format.render(before);
    const renderedAfter = format.render(after);
    const historyBefore = renderedBefore.text.slice(0, renderedBefore.generationPrefixStart);
    expect(renderedAfter.text.startsWith(historyBefore)).toBe(true);
    expect(renderedAfter.text.indexOf("Search the docs")).toBeGreaterThanOrEqual(historyBefore.length);
  });

  it("are callable from there: a forced call may name them", () => {
    const after = conversationOf([...history, MCP_TOOLS]);
    const grammar = format.toolCallGrammar({
      tools: [...after.tools, ...after.referencedTools],
      choice: { name: "mcp__docs.search" },
      parallel: false,
      minCalls: 1,
      thinkingOpen: false,
    });
    expect(grammar).toContain("search");
  });
});

describe("refusals name the field", () => {
  it("an additional_tools item: its role, its tools, a name declared twice in the request", () => {
    expect(invalid([{ ...MCP_TOOLS, role: "user" }])).toMatchObject({ path: "input.0.role" });
    expect(invalid([{ type: "additional_tools", role: "developer" }])).toMatchObject({ path: "input.0.tools" });
    expect(invalid([{ ...MCP_TOOLS, tools: [{ type: "code_interpreter" }] }])).toMatchObject({
      path: "input.0.tools.0.type",
    });
    const nested = { type: "namespace", name: "ns", tools: [{ type: "web_search" }] };
    expect(invalid([{ ...MCP_TOOLS, tools: [nested] }])).toMatchObject({ path: "input.0.tools.0.tools.0.type" });
    expect(invalid([MCP_TOOLS, MCP_TOOLS])).toMatchObject({
      path: "input.1.tools.0.tools.0.name",
      message: expect.stringContaining("'mcp__docs.search' appears more than once"),
    });
    expect(invalid([MCP_TOOLS], { tool_choice: { type: "function", name: "x" } })).toMatchObject({
      path: "tool_choice.name",
    });
    // tool_choice may name a tool an additional_tools item declares.
    expect(validate([MCP_TOOLS], { tool_choice: { type: "function", name: "mcp__docs.search" } }).tool_choice).toEqual({
      type: "function",
      name: "mcp__docs.search",
    });
  });

  it("a configuration_update: its effort and its format", () => {
    expect(invalid([{ type: "configuration_update", reasoning: { effort: "extreme" } }])).toMatchObject({
      path: "input.0.reasoning.effort",
    });
    expect(invalid([{ type: "configuration_update", text: { format: { type: "xml" } } }])).toMatchObject({
      path: "input.0.text.format.type",
    });
  });

  it("an item type Frontier does not know: a 400 naming the type", () => {
    const error = invalid([{ type: "program", id: "p", call_id: "c", code: "", fingerprint: "" }]);
    expect(error.path).toBe("input.0.type");
    expect(error.message).toContain('Unsupported input item type "program"');
    expect(error.message).toContain("additional_tools");
  });

  it("hosted tools in an additional_tools item are named as not offered, never a 400", () => {
    const request = validate([
      { ...MCP_TOOLS, tools: [...MCP_TOOLS.tools, { type: "tool_search" }, { type: "web_search" }] },
    ]);
    const item = request.input[0] as Extract<InputItem, { type: "additional_tools" }>;
    expect(item.tools_not_offered).toEqual(["tool_search", "web_search"]);
  });
});
