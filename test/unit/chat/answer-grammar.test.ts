/**
 * response_format by grammar: every family's answer grammar admits exactly the JSON values of the
 * schema (after its text markup, closing an open thinking block), allows a call instead only with
 * tool_choice auto, refuses with strict what it cannot guarantee, and stays within the bounds.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { FamilyFormat } from "../../../gpu-worker/chat/engine/family.ts";
import { DeepSeekFormat } from "../../../gpu-worker/chat/families/deepseek/deepseek.ts";
import { DeepSeekV31Format } from "../../../gpu-worker/chat/families/deepseek/deepseek-v31.ts";
import { GlmFormat } from "../../../gpu-worker/chat/families/glm/glm.ts";
import { HarmonyFormat } from "../../../gpu-worker/chat/families/harmony/harmony.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3Format } from "../../../gpu-worker/chat/families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import { SchemaGrammarError } from "../../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import { grammarForTurn } from "../../../gpu-worker/generate/sampling-policy.ts";
import {
  ConversationSchema,
  ResponseFormatSchema,
  ResponseFormatType,
  ThinkingMode,
  ToolChoiceMode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { TOOLS, text, toolResult, user } from "./fixtures.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";

const formats: FamilyFormat[] = [
  new ChatMlFormat(),
  new Qwen3Format(),
  new Qwen3CoderFormat({ thinking: true }),
  new GlmFormat(),
  new HarmonyFormat(),
  new DeepSeekFormat(),
  new DeepSeekV31Format(),
];

const FIELD = "response_format.json_schema.schema";
const WEATHER = {
  type: "object",
  properties: {
    city: { type: "string", maxLength: 12 },
    unit: { enum: ["c", "f"] },
    days: { type: "array", items: { type: "integer" }, maxItems: 2 },
  },
  required: ["city", "unit"],
  additionalProperties: false,
};

describe.each(formats.map((f) => [f.name, f, f.spec.markup] as const))("%s answer grammar", (_name, format, markup) => {
  const open = markup.textOpen ?? "";
  const weather = (thinkingOpen = false) =>
    format.answerGrammar({ schema: WEATHER, strict: true, field: FIELD, thinkingOpen });

  it("admits the schema's values only, in canonical spacing", () => {
    const g = weather();
    expect(undefinedRules(parseGbnf(g))).toEqual([]);
    expect(parseGbnf(g).unbounded).toBe(0);
    expect(gbnfMatches(g, `${open}{"city": "Oslo", "unit": "c"}`)).toBe(true);
    expect(gbnfMatches(g, `${open}{"city": "Oslo", "unit": "f", "days": [1, 2]}`)).toBe(true);
    expect(gbnfMatches(g, `${open}{"city": "Oslo"}`)).toBe(false);
    expect(gbnfMatches(g, `${open}{"city": "Oslo", "unit": "k"}`)).toBe(false);
    expect(gbnfMatches(g, `${open}{"city": "Oslo", "unit": "c", "days": [1, 2, 3]}`)).toBe(false);
    expect(gbnfMatches(g, `${open}Sure: {"city": "Oslo", "unit": "c"}`)).toBe(false);
    expect(gbnfMatches(weather(true), `${markup.thinkingClose}${open}{"city": "Oslo", "unit": "c"}`)).toBe(true);
  });

  it("json_object: any JSON object", () => {
    const g = format.answerGrammar({ schema: undefined, strict: false, field: FIELD, thinkingOpen: false });
    expect(gbnfMatches(g, `${open}{"a": 1, "b": [true, null]}`)).toBe(true);
    expect(gbnfMatches(g, `${open}{}`)).toBe(true);
    expect(gbnfMatches(g, `${open}[1]`)).toBe(false);
    expect(gbnfMatches(g, `${open}hello`)).toBe(false);
  });

  it("with calls allowed: a call or the answer", () => {
    const call = toolCallsText(markup, [{ name: "Bash", argumentsJson: '{"command": "ls"}' }]);
    const answer = `${open}{"city": "Oslo", "unit": "c"}`;
    const g = format.answerGrammar({
      schema: WEATHER,
      strict: false,
      field: FIELD,
      thinkingOpen: false,
      calls: { tools: TOOLS, choice: "any", parallel: false },
    });
    expect(gbnfMatches(g, call)).toBe(true);
    expect(gbnfMatches(g, answer)).toBe(true);
    expect(gbnfMatches(weather(), call)).toBe(false);
  });
});

describe("strict schemas and bounds", () => {
  const format = new ChatMlFormat();
  const build = (schema: unknown, strict: boolean) =>
    format.answerGrammar({ schema, strict, field: FIELD, thinkingOpen: false });
  const refusal = (schema: unknown, strict = true): SchemaGrammarError => {
    try {
      build(schema, strict);
    } catch (error) {
      if (error instanceof SchemaGrammarError) return error;
      throw error;
    }
    throw new Error("accepted");
  };

  it("strict refuses keywords and bounds the grammar cannot guarantee, naming the path", () => {
    const pattern = refusal({ type: "object", properties: { id: { type: "string", pattern: "^a" } } });
    expect(pattern.param).toBe(FIELD);
    expect(pattern.message).toContain(`${FIELD}.properties.id.pattern: this keyword is not enforced`);
    expect(refusal({ type: "string", minLength: 300 }).message).toContain("minLength");
    expect(refusal({ type: "array", minItems: 9 }).message).toContain(`${FIELD}.minItems`);
    expect(refusal({ type: "number", multipleOf: 5 }).message).toContain(`${FIELD}.multipleOf`);
    expect(refusal({ type: "object", additionalProperties: { type: "string" } }).message).toContain(
      "additionalProperties",
    );
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 10; i++) deep = { type: "object", properties: { x: deep }, required: ["x"] };
    expect(refusal(deep).message).toContain("nesting deeper than 8");
  });

  it("strict accepts the string lengths and number ranges the grammar holds exactly", () => {
    const grammar = build(
      {
        type: "object",
        properties: { n: { type: "integer", minimum: 5, maximum: 40 }, s: { type: "string", minLength: 100 } },
        required: ["n", "s"],
      },
      true,
    );
    expect(grammar).toBeDefined();
    expect(() => build({ type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1 }, true)).not.toThrow();
  });

  it("without strict the same schemas are best effort", () => {
    expect(() => build({ type: "object", properties: { id: { type: "string", pattern: "^a" } } }, false)).not.toThrow();
    expect(() => build({ type: "integer", minimum: 5 }, false)).not.toThrow();
  });

  it("invalid or huge schemas are refused under the response format's field, strict or not", () => {
    const huge = { anyOf: Array.from({ length: 7 }, () => ({ $ref: "#" })) };
    for (const strict of [true, false]) {
      const error = refusal(huge, strict);
      expect(error.param).toBe(FIELD);
      expect(error.message).toContain("more than 4096 nodes");
    }
    expect(refusal({ type: "strin" }, false).message).toContain(`${FIELD}: "type" "strin" is not a JSON Schema type`);
  });
});

describe("grammarForTurn with a response format", () => {
  const format = new ChatMlFormat();
  const markup = format.spec.markup;
  const responseFormat = create(ResponseFormatSchema, {
    type: ResponseFormatType.JSON_SCHEMA,
    schemaJson: JSON.stringify(WEATHER),
    field: FIELD,
  });
  const turn = (mode: ToolChoiceMode, name = "", last = user(text("weather?"))) =>
    create(ConversationSchema, {
      tools: TOOLS,
      toolChoice: { mode, name },
      thinking: { mode: ThinkingMode.DISABLED },
      messages: [last],
    });
  const call = toolCallsText(markup, [{ name: "Bash", argumentsJson: '{"command": "ls"}' }]);
  const answer = '{"city": "Oslo", "unit": "c"}';

  it("auto: a call or the answer; none: the answer; a forced choice: the call", () => {
    const auto = grammarForTurn(format, turn(ToolChoiceMode.AUTO), false, undefined, responseFormat) ?? "";
    expect([gbnfMatches(auto, call), gbnfMatches(auto, answer)]).toEqual([true, true]);
    const none = grammarForTurn(format, turn(ToolChoiceMode.NONE), false, undefined, responseFormat) ?? "";
    expect([gbnfMatches(none, call), gbnfMatches(none, answer)]).toEqual([false, true]);
    const forced = grammarForTurn(format, turn(ToolChoiceMode.TOOL, "Bash"), false, undefined, responseFormat) ?? "";
    expect([gbnfMatches(forced, call), gbnfMatches(forced, answer)]).toEqual([true, false]);
  });

  it("the scripted test policy never lets the random model choose a call: the answer only", () => {
    // On a user turn the policy forces its fixed echo calls; after tool results the answer is JSON only.
    const afterResults = turn(ToolChoiceMode.AUTO, "", user(toolResult("call_1", "ok")));
    const scripted = grammarForTurn(format, afterResults, false, "scripted-tools", responseFormat) ?? "";
    expect([gbnfMatches(scripted, call), gbnfMatches(scripted, answer)]).toEqual([false, true]);
  });

  it("text and absent formats leave the turn free", () => {
    const text = create(ResponseFormatSchema, { type: ResponseFormatType.TEXT });
    expect(grammarForTurn(format, turn(ToolChoiceMode.AUTO), false, undefined, text)).toBeUndefined();
    expect(grammarForTurn(format, turn(ToolChoiceMode.AUTO), false, undefined)).toBeUndefined();
  });
});
