/**
 * Issue 33: a forced call's grammar holds the schema's string lengths and numeric bounds exactly,
 * in every family (the XML families capped every string at 24 characters, and `minimum`/`maximum`
 * were ignored everywhere); bounds it cannot hold are refused, naming the keyword and its path.
 */
import { describe, expect, it } from "vitest";
import type { FamilyFormat } from "../../../gpu-worker/chat/engine/family.ts";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { jsonSchemaToGbnf, SchemaGrammarError } from "../../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { numberRangeGbnf } from "../../../gpu-worker/chat/grammar/number-range.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import { createChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import { gbnfMatches, parseGbnf } from "./gbnf-check.ts";

const SCHEMA = {
  type: "object",
  properties: {
    path: { type: "string", maxLength: 20 },
    short: { type: "string", minLength: 3, maxLength: 5 },
    n: { type: "integer", minimum: -7, maximum: 400 },
    x: { type: "number", exclusiveMinimum: 0, maximum: 2.5 },
  },
  required: ["path", "short", "n", "x"],
};

const VALID = { path: "a".repeat(20), short: "abc", n: 400, x: 2.5 };

/** Argument JSON in the grammar's spacing, `x` spelled as given. */
function args(values: Record<string, unknown>, x = String(values.x)): string {
  const { x: _, ...rest } = values;
  const body = Object.entries(rest).map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`);
  return `{${[...body, `"x": ${x}`].join(", ")}}`;
}

const formats = CHAT_FAMILIES.map((f) => createChatFormat(f, { chatTemplate: undefined }) as FamilyFormat);

function forced(format: FamilyFormat, schema: unknown): string {
  return format.toolCallGrammar({
    tools: [{ name: "t", inputSchemaJson: JSON.stringify(schema) }],
    choice: { name: "t" },
    parallel: false,
    thinkingOpen: false,
  });
}

describe.each(formats)("$name: a forced call holds the schema's bounds", (format) => {
  const grammar = parseGbnf(forced(format, SCHEMA));
  // A family whose forced turns open with an empty reasoning block (Kimi's `<think></think>`) has it first.
  const lead = (text: string): string[] => ["", format.spec.markup.thinkingClose].map((p) => p + text);
  const call = (values: Record<string, unknown>, x?: string): boolean =>
    lead(toolCallsText(format.spec.markup, [{ name: "t", argumentsJson: args(values, x) }])).some((t) =>
      gbnfMatches(grammar, t),
    );

  it("takes values at the bounds", () => {
    expect(call(VALID)).toBe(true);
    expect(call({ ...VALID, path: "a", short: "abcde", n: -7 })).toBe(true);
    expect(call({ ...VALID, n: 0 }, "0.0001")).toBe(true);
    expect(call({ ...VALID, n: 12 }, "2.50")).toBe(true);
  });

  it("refuses strings past maxLength or short of minLength", () => {
    expect(call({ ...VALID, path: "a".repeat(21) })).toBe(false);
    expect(call({ ...VALID, path: "a".repeat(24) })).toBe(false);
    expect(call({ ...VALID, short: "ab" })).toBe(false);
    expect(call({ ...VALID, short: "abcdef" })).toBe(false);
  });

  it("raises its own string bound to a longer minLength", () => {
    const schema = { type: "object", properties: { long: { type: "string", minLength: 40 } }, required: ["long"] };
    const long = parseGbnf(forced(format, schema));
    const matches = (n: number): boolean =>
      lead(toolCallsText(format.spec.markup, [{ name: "t", argumentsJson: `{"long": "${"b".repeat(n)}"}` }])).some(
        (t) => gbnfMatches(long, t),
      );
    expect(matches(40)).toBe(true);
    // Without maxLength the grammar's own bound stands, raised to minLength where that is longer.
    expect(matches(39)).toBe(false);
    expect(matches(41)).toBe(false);
  });

  it("refuses integers and numbers past minimum, maximum and the exclusive bounds", () => {
    for (const n of [401, 556556, -8, 1000]) expect(call({ ...VALID, n }), String(n)).toBe(false);
    for (const x of ["0", "0.0", "-0.5", "2.5001", "2.6", "3", "-1"]) expect(call(VALID, x), x).toBe(false);
  });
});

describe("numberRangeGbnf", () => {
  /** Every spelling with up to `f` fraction digits near the range, matched against the range. */
  function exhaustive(lo: number, hi: number, f: number): string[] {
    const grammar = parseGbnf(`root ::= ${numberRangeGbnf(BigInt(lo), BigInt(hi), f)}\n`);
    const unit = 10 ** f;
    const wrong: string[] = [];
    for (let n = lo - 25; n <= hi + 25; n++) {
      for (let k = 0; k <= f; k++) {
        if (n % 10 ** (f - k) !== 0) continue;
        const v = n / unit;
        const text = `${v < 0 ? "-" : ""}${Math.abs(v).toFixed(k)}`;
        const want = n >= lo && n <= hi && !/^-0(\.0*)?$/.test(text);
        if (gbnfMatches(grammar, text) !== want) wrong.push(text);
      }
    }
    for (const text of ["01", "-0", "00", "1.", "-", "", "+1", "1e2"]) if (gbnfMatches(grammar, text)) wrong.push(text);
    return wrong;
  }

  it.each([
    [0, 400, 0],
    [-57, 1234, 0],
    [-999, -13, 0],
    [7, 7, 0],
    [0, 9, 0],
    [99, 1001, 0],
    [-5, 5, 1],
    [3, 17, 2],
    [-20, -3, 1],
    [-1234, 5678, 2],
  ])("[%i, %i] in units of 10^-%i: exactly the values in range", (lo, hi, f) => {
    expect(exhaustive(lo, hi, f)).toEqual([]);
  });
});

describe("bounds the grammar cannot hold are refused, naming the keyword and path", () => {
  const refusal = (property: unknown): string => {
    const schema = { type: "object", properties: { p: property }, required: ["p"] };
    for (const format of formats) expect(() => forced(format, schema), format.name).toThrow(SchemaGrammarError);
    try {
      forced(formats[0] as FamilyFormat, schema);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error("accepted");
  };

  it.each([
    [{ type: "integer", minimum: 5, maximum: 3 }, "properties.p.maximum: no integer satisfies minimum 5, maximum 3"],
    [{ type: "integer", exclusiveMinimum: 3, exclusiveMaximum: 4 }, "properties.p.exclusiveMaximum"],
    [{ type: "integer", maximum: "400" }, 'properties.p.maximum: must be a number (got "400")'],
    [{ type: "integer", minimum: 2 ** 60 }, "properties.p.minimum"],
    [{ type: "number", exclusiveMinimum: 0, exclusiveMaximum: 1e-13 }, "at most 12 fraction digits"],
    [{ type: "string", minLength: 300 }, "properties.p.minLength: a forced call's strings are at most 256"],
    [{ type: "string", minLength: 4, maxLength: 3 }, "properties.p.maxLength: 3 is below minLength 4"],
    [{ type: "string", maxLength: -1 }, "properties.p.maxLength: must be a non-negative integer"],
  ])("%j", (property, message) => {
    expect(refusal(property)).toContain(message);
  });

  it("names the tool and the path through items and anyOf", () => {
    const schema = {
      type: "object",
      properties: { list: { type: "array", items: { anyOf: [{ type: "integer", maximum: 1, minimum: 2 }] } } },
    };
    expect(() => jsonSchemaToGbnf(schema)).toThrow("input_schema: properties.list.items.anyOf.0.maximum");
  });

  it("keeps the unbounded grammars where no bound is given", () => {
    const g = jsonSchemaToGbnf({
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "number", minimum: 0 } },
    });
    expect(g).toContain("json-integer ::=");
    expect(g).toContain("json-unumber ::=");
  });
});
