/** Responses input → proto conversation, routing IDs, and request validation. */
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { toConversation } from "../../../edge/protocols/responses/request/normalize.ts";
import { collectResponsesRoutingIds } from "../../../edge/protocols/responses/request/routing-ids.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { Role, ThinkingMode, ToolChoiceMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

const tools = [{ type: "function", name: "lookup", parameters: { type: "object" } }];
const loop = [
  { role: "developer", content: "Be terse." },
  {
    role: "user",
    content: [
      { type: "input_text", text: "Find " },
      { type: "input_text", text: "two" },
    ],
  },
  { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "plan" }] },
  { type: "message", role: "assistant", id: "msg_1", content: [{ type: "output_text", text: "Looking." }] },
  { type: "function_call", id: "fc_1", call_id: "call_1", name: "lookup", arguments: '{"w":"a"}' },
  { type: "function_call", id: "fc_2", call_id: "call_2", name: "lookup", arguments: '{"w":"b"}' },
  { type: "function_call_output", call_id: "call_2", output: "B" },
  { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "A" }] },
  { role: "system", content: "late system note" },
];

describe("Responses normalisation", () => {
  it("merges assistant-side and user-side items into turns; early developer text joins the system prompt", () => {
    const request = validateResponsesRequest({
      model: "m",
      instructions: "You are an agent.",
      input: loop,
      tools,
      tool_choice: "required",
      parallel_tool_calls: false,
      reasoning: { effort: "low" },
    });
    const conversation = toConversation(request, request.input);
    expect(conversation.system).toEqual(["You are an agent.", "Be terse."]);
    expect(conversation.messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER, Role.SYSTEM]);
    expect(conversation.messages[0]?.content.map((b) => b.block.value)).toMatchObject([{ text: "Find two" }]);
    expect(conversation.messages[1]?.content.map((b) => b.block.case)).toEqual([
      "thinking",
      "text",
      "toolUse",
      "toolUse",
    ]);
    expect(conversation.messages[1]?.content[2]?.block.value).toMatchObject({ id: "call_1", inputJson: '{"w":"a"}' });
    expect(conversation.messages[2]?.content.map((b) => b.block.value)).toMatchObject([
      { toolUseId: "call_2", content: "B" },
      { toolUseId: "call_1", content: "A" },
    ]);
    expect(conversation.toolChoice).toMatchObject({ mode: ToolChoiceMode.ANY, disableParallelToolUse: true });
    expect(conversation.thinking?.mode).toBe(ThinkingMode.ENABLED);
  });

  it("collects the trailing call outputs and the replayed IDs (latest turn first) for routing", () => {
    const request = validateResponsesRequest({ model: "m", input: loop });
    expect(collectResponsesRoutingIds(request.input)).toEqual({
      toolResults: ["call_2", "call_1"],
      replayed: [["call_2", "fc_2", "call_1", "fc_1", "msg_1", "rs_1"]],
      firstTurn: false,
      assistantTurns: 1,
    });
    const fresh = validateResponsesRequest({ model: "m", input: "hello" });
    expect(collectResponsesRoutingIds(fresh.input)).toEqual({
      toolResults: [],
      replayed: [],
      firstTurn: true,
      assistantTurns: 0,
    });
  });
});

describe("Responses validation", () => {
  const invalid = (body: unknown) => {
    try {
      validateResponsesRequest(body);
    } catch (error) {
      if (error instanceof ValidationError) return error.path.join(".");
      throw error;
    }
    throw new Error("expected a ValidationError");
  };

  it("defaults store to true, stream to false and tool_choice to auto", () => {
    const request = validateResponsesRequest({ model: "m", input: "x" });
    expect(request).toMatchObject({ store: true, stream: false, tool_choice: "auto", parallel_tool_calls: true });
    expect(request.input).toEqual([{ type: "message", role: "user", text: "x" }]);
  });

  it("names the field of each invalid or unsupported input", () => {
    expect(invalid({ model: "m" })).toBe("input");
    expect(invalid({ model: "m", input: [{ role: "robot", content: "x" }] })).toBe("input.0.role");
    expect(invalid({ model: "m", input: [{ role: "user", content: [{ type: "input_image", image_url: "u" }] }] })).toBe(
      "input.0.content.0.type",
    );
    expect(invalid({ model: "m", input: [{ type: "item_reference", id: "x" }] })).toBe("input.0.type");
    expect(invalid({ model: "m", input: [{ type: "function_call_output", output: "x" }] })).toBe("input.0.call_id");
    expect(invalid({ model: "m", input: "x", tools: [{ type: "file_search" }] })).toBe("tools.0.type");
    expect(invalid({ model: "m", input: "x", tools, tool_choice: { type: "function", name: "nope" } })).toBe(
      "tool_choice.name",
    );
    expect(invalid({ model: "m", input: "x", background: true })).toBe("background");
    expect(invalid({ model: "m", input: "x", text: { format: { type: "json_schema" } } })).toBe("text.format.name");
    expect(invalid({ model: "m", input: "x", text: { format: { type: "xml" } } })).toBe("text.format.type");
    expect(invalid({ model: "m", input: "x", text: { format: { type: "json_schema", name: "n", schema: 1 } } })).toBe(
      "text.format.schema",
    );
    expect(invalid({ model: "m", input: "x", max_output_tokens: 0 })).toBe("max_output_tokens");
    expect(invalid({ model: "m", input: "x", temperature: 3 })).toBe("temperature");
  });
});
