/**
 * Issue 14: tool schemas that stalled the worker or broke the grammar are refused with a
 * SchemaGrammarError (the worker's 400 naming the tool), and schema literals cannot spell markup.
 */
import { describe, expect, it } from "vitest";
import type { FamilyFormat } from "../../../gpu-worker/chat/engine/family.ts";
import { DeepSeekFormat } from "../../../gpu-worker/chat/families/deepseek/deepseek.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { SchemaGrammarError } from "../../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { type ToolCallMarkup, toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import type { ChatFormat, OutputEvent } from "../../../gpu-worker/chat/types.ts";
import { gbnfMatches } from "./gbnf-check.ts";

const chatml = new ChatMlFormat();

function forced(format: ChatFormat, schema: unknown, name = "t"): string {
  return format.toolCallGrammar({
    tools: [{ name, inputSchemaJson: JSON.stringify(schema) }],
    choice: { name },
    parallel: false,
    thinkingOpen: false,
  });
}

describe("schema bounds", () => {
  it("refuses a self-referencing anyOf that expands exponentially (13 s of event loop before)", () => {
    const schema = { anyOf: Array.from({ length: 7 }, () => ({ $ref: "#" })) };
    expect(JSON.stringify(schema).length).toBeLessThan(300);
    expect(() => forced(chatml, schema)).toThrow(SchemaGrammarError);
    expect(() => forced(chatml, schema, "recursive")).toThrow(/input_schema of tool 'recursive'.*more than 4096 nodes/);
  });

  it("refuses an object with more optional properties than llama.cpp's grammar setup takes quickly", () => {
    const object = (n: number, required: number) => ({
      type: "object",
      properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string" }])),
      required: Array.from({ length: required }, (_, i) => `p${i}`),
    });
    // 4,094 optional properties took 3.6 s of event loop in llama.cpp (bench/engine/grammar-worst.ts).
    expect(() => forced(chatml, object(4094, 0), "wide")).toThrow(
      /input_schema of tool 'wide': an object has 4094 optional properties.*at most 256/,
    );
    expect(() => forced(chatml, object(257, 0))).toThrow(SchemaGrammarError);
    // The bound is on optional ones: the same width with the rest required is fine.
    const grammar = forced(chatml, object(4094, 4094 - 256));
    expect(grammar).toContain('"\\"p4093\\": "');
    // Thousands of rules sharing one name hint still get distinct names.
    const names = grammar.split("\n").map((line) => line.split(" ::= ")[0]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("refuses empty and unknown types instead of emitting invalid GBNF", () => {
    expect(() => forced(chatml, { type: [] })).toThrow(/"type" is an empty list/);
    expect(() => forced(chatml, { type: "object", properties: { a: { type: "strin" } } })).toThrow(
      /"strin" is not a JSON Schema type/,
    );
    expect(() => forced(chatml, { type: 5 })).toThrow(SchemaGrammarError);
    expect(() => forced(chatml, { type: ["string", "null"] })).not.toThrow();
  });

  it("keeps ordinary schemas, many tools included, within the bounds", () => {
    const tools = Array.from({ length: 64 }, (_, i) => ({
      name: `tool_${i}`,
      inputSchemaJson: JSON.stringify({
        type: "object",
        properties: {
          a: { type: "string" },
          b: { type: "array", items: { type: "integer" } },
          c: { enum: ["x", "y"] },
        },
        required: ["a"],
      }),
    }));
    expect(() => chatml.toolCallGrammar({ tools, choice: "any", parallel: true, thinkingOpen: false })).not.toThrow();
  });
});

// The families whose call arguments are JSON (the XML-argument ones render values as text).
const cases: [string, ChatFormat, ToolCallMarkup][] = ([chatml, new DeepSeekFormat()] as FamilyFormat[]).map((f) => [
  f.name,
  f,
  f.spec.markup,
]);

describe.each(cases)("%s: schema literals cannot close the call", (_name, format, markup) => {
  const close = markup.callClose.trim();
  const value = `ok${close}`;
  const schema = {
    type: "object",
    properties: { v: { enum: [value] }, [`k${close}`]: { const: value } },
    required: ["v", `k${close}`],
  };
  const spaced = `{"v": ${JSON.stringify(value)}, ${JSON.stringify(`k${close}`)}: ${JSON.stringify(value)}}`;
  const sampled = toolCallsText(markup, [{ name: "t", argumentsJson: spaced.replaceAll("<", "\\u003c") }]);

  it("the grammar allows the value only with `<` escaped, and the parser reads it back as one call", () => {
    const grammar = forced(format, schema);
    expect(gbnfMatches(grammar, sampled)).toBe(true);
    const raw = toolCallsText(markup, [{ name: "t", argumentsJson: spaced }]);
    expect(gbnfMatches(grammar, raw)).toBe(false);
    const parser = format.createOutputParser({ thinkingOpen: false });
    const events: OutputEvent[] = [...parser.push(sampled), ...parser.finish()];
    const calls = events.filter((e) => e.type === "tool_call_end");
    expect(calls).toHaveLength(1);
    expect(events.filter((e) => e.type === "text" && e.text.trim() !== "")).toEqual([]);
    const call = calls[0];
    if (call?.type !== "tool_call_end") throw new Error("no call");
    expect(call.status).toBe("complete");
    expect(JSON.parse(call.argumentsJson)).toEqual({ v: value, [`k${close}`]: value });
  });
});
