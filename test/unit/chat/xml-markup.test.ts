/**
 * Issue 14 item 4 for the XML-argument families (GLM `<arg_key>/<arg_value>`, Qwen3-Coder
 * `<parameter=…>`): nothing a client sends can close or forge the markup of a forced call. Raw
 * values that spell the markup are refused; JSON values write `<` as `\u003c` and their free
 * strings exclude `<`, so the parser reads exactly one call with the client's values back.
 */
import { describe, expect, it } from "vitest";
import type { FamilyFormat } from "../../../gpu-worker/chat/engine/family.ts";
import { GlmFormat } from "../../../gpu-worker/chat/families/glm/glm.ts";
import { Glm47Format } from "../../../gpu-worker/chat/families/glm/glm47.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import { Qwen35Format } from "../../../gpu-worker/chat/families/qwen/qwen35.ts";
import { SchemaGrammarError } from "../../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import type { OutputEvent } from "../../../gpu-worker/chat/types.ts";
import { gbnfMatches } from "./gbnf-check.ts";

function forced(format: FamilyFormat, schema: unknown, name = "t"): string {
  return format.toolCallGrammar({
    tools: [{ name, inputSchemaJson: JSON.stringify(schema) }],
    choice: { name },
    parallel: false,
    thinkingOpen: false,
  });
}

function parse(format: FamilyFormat, schema: unknown, sampled: string): OutputEvent[] {
  const parser = format.createOutputParser({
    thinkingOpen: false,
    tools: [{ name: "t", inputSchemaJson: JSON.stringify(schema) }],
  });
  return [...parser.push(sampled), ...parser.finish()];
}

const cases = [
  {
    format: new GlmFormat(),
    close: "</arg_value>",
    keyClose: "</arg_key>",
    forbidden: ["x</tool_call>", "<arg_key>y", "a<|user|>b", "<|observation|>"],
  },
  {
    format: new Glm47Format(),
    close: "</arg_value>",
    keyClose: "</arg_key>",
    forbidden: ["x</tool_call>", "<arg_key>y", "a<|user|>b", "<|observation|>"],
  },
  {
    format: new Qwen3CoderFormat(),
    close: "</parameter>",
    keyClose: ">",
    forbidden: ["x</tool_call>", "<parameter=y>", "</function>", "a<|im_end|>b"],
  },
  {
    format: new Qwen35Format(),
    close: "</parameter>",
    keyClose: ">",
    forbidden: ["x</tool_call>", "<parameter=y>", "</function>", "a<|im_end|>b"],
  },
] as const;

describe.each(cases)(
  "$format.name: client strings cannot forge argument markup",
  ({ format, close, keyClose, forbidden }) => {
    it("refuses a raw enum value that spells the value's closing tag, naming tool and parameter", () => {
      const schema = { type: "object", properties: { v: { enum: ["fine", `ok${close}`] } }, required: ["v"] };
      expect(() => forced(format, schema, "probe")).toThrow(SchemaGrammarError);
      expect(() => forced(format, schema, "probe")).toThrow(
        new RegExp(`tool 'probe'.*parameter 'v'.*${format.name}'s markup "${close}"`),
      );
    });

    it("refuses raw values that spell the call's close or a control token", () => {
      for (const value of forbidden) {
        const schema = { type: "object", properties: { v: { type: "string", enum: [value] } }, required: ["v"] };
        expect(() => forced(format, schema), value).toThrow(SchemaGrammarError);
      }
    });

    it("refuses a property name the key markup cannot hold, and a tool name with markup", () => {
      const key = `k${keyClose}x`;
      expect(() => forced(format, { type: "object", properties: { [key]: {} }, required: [key] })).toThrow(
        /property name .* cannot be written/,
      );
      expect(() => forced(format, { type: "object", properties: { " k": {} }, required: [" k"] })).toThrow(
        SchemaGrammarError,
      );
      expect(() => forced(format, { type: "object" }, "x</tool_call>y")).toThrow(/tool name/);
    });

    it("keeps benign `<` in a raw enum value, and the parser reads it back", () => {
      const schema = { type: "object", properties: { op: { enum: ["<=", "a<b"] } }, required: ["op"] };
      const grammar = forced(format, schema);
      const sampled = toolCallsText(format.spec.markup, [{ name: "t", argumentsJson: '{"op": "<="}' }]);
      expect(gbnfMatches(grammar, sampled)).toBe(true);
      const calls = parse(format, schema, sampled).filter((e) => e.type === "tool_call_end");
      expect(calls.map((c) => [c.status, JSON.parse(c.argumentsJson)])).toEqual([["complete", { op: "<=" }]]);
    });

    it("a JSON value's enum and keys carry `<` escaped, its free strings none: one call, the exact value", () => {
      const forged = `ok${close}`;
      const schema = {
        type: "object",
        properties: {
          opts: {
            type: "object",
            properties: { mode: { enum: [forged] }, [`k${close}`]: { type: "string", maxLength: 4 } },
            required: ["mode", `k${close}`],
          },
        },
        required: ["opts"],
      };
      const grammar = forced(format, schema);
      const value = { mode: forged, [`k${close}`]: "abc" };
      const plainJson = `{"mode": ${JSON.stringify(forged)}, ${JSON.stringify(`k${close}`)}: "abc"}`;
      // The arguments text writes the value as canonical JSON; the grammar only allows it with `<` escaped.
      const unescaped = toolCallsText(format.spec.markup, [
        { name: "t", argumentsJson: JSON.stringify({ opts: value }) },
      ]);
      expect(unescaped).toContain(plainJson);
      const sampled = unescaped.replace(plainJson, plainJson.replaceAll("<", "\\u003c"));
      expect(gbnfMatches(grammar, sampled)).toBe(true);
      expect(gbnfMatches(grammar, unescaped)).toBe(false);
      const events = parse(format, schema, sampled);
      expect(events.filter((e) => e.type === "text" && e.text.trim() !== "")).toEqual([]);
      const calls = events.filter((e) => e.type === "tool_call_end");
      expect(calls).toHaveLength(1);
      expect(calls.map((c) => [c.status, JSON.parse(c.argumentsJson)])).toEqual([["complete", { opts: value }]]);
    });

    it("a free string inside a JSON value cannot spell a closing tag", () => {
      const schema = {
        type: "object",
        properties: { opts: { type: "object", properties: { s: { type: "string" } }, required: ["s"] } },
        required: ["opts"],
      };
      const grammar = forced(format, schema);
      const call = (s: string) =>
        toolCallsText(format.spec.markup, [{ name: "t", argumentsJson: JSON.stringify({ opts: { s } }) }]);
      expect(gbnfMatches(grammar, call("a b"))).toBe(true);
      expect(gbnfMatches(grammar, call(`a${close}`))).toBe(false);
      expect(gbnfMatches(grammar, call("a<b"))).toBe(false);
    });
  },
);
