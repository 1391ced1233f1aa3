/**
 * The scripted policy's tool-search steps: a user turn declaring ToolSearch (and no shell tool) calls
 * it with the fixed `select:` query; once a tool_reference loaded a deferred tool, the next turn calls
 * that tool with fixed arguments; after its result, the policy answers in plain text.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import { grammarForTurn } from "../../../gpu-worker/generate/sampling-policy.ts";
import {
  SCRIPTED_DEFERRED_ARGUMENT,
  SCRIPTED_DEFERRED_TOOL,
} from "../../../gpu-worker/generate/scripted-tool-search.ts";
import {
  ConversationSchema,
  type MessageSchema,
  ToolChoiceMode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, text, toolResult, toolUse, user } from "./fixtures.ts";
import { gbnfMatches } from "./gbnf-check.ts";

const format = new ChatMlFormat();
const markup = format.spec.markup;
const toolSearch = { name: "ToolSearch", description: "Loads deferred tools", inputSchemaJson: '{"type":"object"}' };
const lookup = {
  name: SCRIPTED_DEFERRED_TOOL,
  description: "Look up an invoice",
  inputSchemaJson: JSON.stringify({
    type: "object",
    properties: { record_id: { type: "string" }, include_history: { type: "boolean" } },
    required: ["record_id"],
  }),
};
const searchCall = { name: "ToolSearch", argumentsJson: JSON.stringify({ query: `select:${SCRIPTED_DEFERRED_TOOL}` }) };
const lookupCall = {
  name: SCRIPTED_DEFERRED_TOOL,
  argumentsJson: JSON.stringify({ record_id: SCRIPTED_DEFERRED_ARGUMENT }),
};

function turn(messages: MessageInitShape<typeof MessageSchema>[], referenced = [lookup]) {
  return create(ConversationSchema, {
    tools: [toolSearch],
    referencedTools: referenced,
    toolChoice: { mode: ToolChoiceMode.AUTO },
    messages,
  });
}

const grammarOf = (conversation: ReturnType<typeof turn>) =>
  grammarForTurn(format, conversation, false, "scripted-tools") ?? "";

describe("scripted-tools policy: tool search", () => {
  it("calls ToolSearch with the fixed select query on a user turn", () => {
    const grammar = grammarOf(turn([user(text("Look up the invoice."))], []));
    expect(gbnfMatches(grammar, toolCallsText(markup, [searchCall]))).toBe(true);
    const other = { name: "ToolSearch", argumentsJson: JSON.stringify({ query: "select:Bash" }) };
    expect(gbnfMatches(grammar, toolCallsText(markup, [other]))).toBe(false);
  });

  it("calls the tool a tool_reference loaded, its required string arguments fixed", () => {
    const grammar = grammarOf(
      turn([
        user(text("Look up the invoice.")),
        assistant(toolUse("toolu_1", "ToolSearch", searchCall.argumentsJson)),
        user(toolResult("toolu_1", "loaded")),
      ]),
    );
    expect(gbnfMatches(grammar, toolCallsText(markup, [lookupCall]))).toBe(true);
    expect(gbnfMatches(grammar, "Done.")).toBe(false);
  });

  it("answers in plain text once the loaded tool was called", () => {
    const grammar = grammarOf(
      turn([
        user(text("Look up the invoice.")),
        assistant(toolUse("toolu_1", "ToolSearch", searchCall.argumentsJson)),
        user(toolResult("toolu_1", "loaded")),
        assistant(toolUse("toolu_2", SCRIPTED_DEFERRED_TOOL, lookupCall.argumentsJson)),
        user(toolResult("toolu_2", "found")),
      ]),
    );
    expect(gbnfMatches(grammar, "Done.")).toBe(true);
    expect(gbnfMatches(grammar, toolCallsText(markup, [lookupCall]))).toBe(false);
  });
});
