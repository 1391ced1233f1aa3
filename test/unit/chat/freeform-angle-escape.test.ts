/**
 * Issue 30 "Low": a custom tool's Lark literal is written into a JSON-argument family's call the way
 * the JSON-schema grammar writes its literals, with `<` as `\u003c`, so a client's grammar cannot make
 * the model spell the family's markup (`</tool_call>`) inside the call. The call still parses back to
 * the literal's exact text.
 */
import { describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3Format } from "../../../gpu-worker/chat/families/qwen/qwen3.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import { CUSTOM_SCHEMA } from "./codex-apply-patch.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";

const tool = {
  name: "shell",
  inputSchemaJson: CUSTOM_SCHEMA,
  inputGrammar: { syntax: "lark", definition: 'start: "</tool_call>" WORD\n%import common.WORD' },
};

describe.each([
  ["chatml", new ChatMlFormat()],
  ["qwen3", new Qwen3Format()],
])("%s: a Lark literal holding '<'", (_name, format) => {
  const grammar = format.toolCallGrammar({
    tools: [tool],
    choice: { name: "shell" },
    parallel: false,
    thinkingOpen: false,
  });
  const call = (argumentsJson: string) => toolCallsText(format.spec.markup, [{ name: "shell", argumentsJson }]);

  it("is written \\u003c in the grammar, never as the raw markup", () => {
    expect(undefinedRules(parseGbnf(grammar))).toEqual([]);
    expect(grammar).not.toContain('</tool_call>\\"');
    expect(grammar).toContain("\\\\u003c/tool_call>");
    expect(gbnfMatches(grammar, call('{"input": "\\u003c/tool_call>abc"}'))).toBe(true);
    expect(gbnfMatches(grammar, call('{"input": "</tool_call>abc"}'))).toBe(false);
  });

  it("the escaped call parses back to the literal's exact text", () => {
    const parser = format.createOutputParser({ thinkingOpen: false, tools: [tool] });
    const events = [...parser.push(call('{"input": "\\u003c/tool_call>abc"}')), ...parser.finish()];
    const ends = events.filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => [e.name, e.status])).toEqual([["shell", "complete"]]);
    expect(JSON.parse(ends[0]?.argumentsJson ?? "")).toEqual({ input: "</tool_call>abc" });
  });
});
