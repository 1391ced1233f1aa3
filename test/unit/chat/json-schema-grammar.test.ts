import { describe, expect, it } from "vitest";
import { JsonSchemaGrammar, jsonSchemaToGbnf } from "../../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { canonicalJson } from "../../../gpu-worker/chat/json-text.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";

const SCHEMA = {
  type: "object",
  properties: {
    command: { type: "string", description: "what to run" },
    timeout: { type: "integer", minimum: 0 },
    mode: { enum: ["fast", "slow"] },
    ratio: { type: "number" },
    opts: {
      type: "object",
      properties: { deep: { type: "boolean" }, label: { type: ["string", "null"] } },
      required: ["deep"],
    },
    tags: { type: "array", items: { type: "string" }, maxItems: 3 },
    meta: {},
    choice: { anyOf: [{ type: "integer" }, { const: "auto" }] },
  },
  required: ["command", "opts"],
};

function wellFormed(grammar: string): void {
  const parsed = parseGbnf(grammar);
  expect(parsed.rules.has("root")).toBe(true);
  expect(undefinedRules(parsed)).toEqual([]);
  expect(parsed.unbounded, "no *, + or {m,} anywhere").toBe(0);
}

describe("JSON Schema → GBNF", () => {
  const grammar = jsonSchemaToGbnf(SCHEMA);
  const accepts = (value: unknown) => gbnfMatches(grammar, typeof value === "string" ? value : canonicalJson(value));

  it("is well formed and bounded", () => {
    wellFormed(grammar);
    expect(grammar).not.toMatch(/[*+]/);
  });

  it("accepts canonical values: required in schema order, then optional ones in order", () => {
    expect(accepts({ command: "ls -la", opts: { deep: true } })).toBe(true);
    expect(
      accepts({
        command: "",
        opts: { deep: false, label: null },
        timeout: 120,
        mode: "fast",
        ratio: -3.25,
        tags: ["a", 'b \\ " c'],
        meta: { k: [1, "x"] },
        choice: "auto",
      }),
    ).toBe(true);
    expect(accepts({ command: "x", opts: { deep: true, label: "l" }, choice: 42 })).toBe(true);
    expect(accepts({ command: "x", opts: { deep: true }, ratio: 0.5 })).toBe(true);
  });

  it("rejects what is not canonical or not bounded", () => {
    expect(accepts('{"command":"ls","opts":{"deep":true}}')).toBe(false);
    expect(accepts('{"command": "ls", "opts": {"deep": true}}\n')).toBe(false);
    expect(accepts({ opts: { deep: true }, command: "ls" })).toBe(false);
    expect(accepts({ command: "ls" })).toBe(false);
    expect(accepts({ command: "x".repeat(33), opts: { deep: true } })).toBe(false);
    expect(accepts({ command: "x".repeat(32), opts: { deep: true } })).toBe(true);
    expect(accepts({ command: "a\nb", opts: { deep: true } })).toBe(false);
    expect(accepts({ command: "é", opts: { deep: true } })).toBe(false);
    expect(accepts({ command: "x", opts: { deep: true }, timeout: -1 })).toBe(false);
    expect(accepts({ command: "x", opts: { deep: true }, timeout: 1234567 })).toBe(false);
    expect(accepts('{"command": "x", "opts": {"deep": true}, "ratio": 1e5}')).toBe(false);
    expect(accepts({ command: "x", opts: { deep: true }, ratio: 1.23456 })).toBe(false);
    expect(accepts({ command: "x", opts: { deep: true }, mode: "medium" })).toBe(false);
    expect(accepts({ command: "x", opts: { deep: true }, tags: ["a", "b", "c", "d"] })).toBe(false);
    expect(accepts({ command: "x", opts: { deep: true }, meta: { a: { b: { c: 1 } } } })).toBe(false);
  });

  it("handles objects whose properties are all optional", () => {
    const g = jsonSchemaToGbnf({
      type: "object",
      properties: { a: { type: "integer" }, b: { type: "boolean" }, c: { type: "null" } },
    });
    wellFormed(g);
    for (const ok of [
      "{}",
      '{"a": 1}',
      '{"b": true}',
      '{"c": null}',
      '{"a": 1, "c": null}',
      '{"a": 1, "b": false, "c": null}',
    ]) {
      expect(gbnfMatches(g, ok), ok).toBe(true);
    }
    for (const bad of ['{"b": true, "a": 1}', '{, "b": true}', '{"a": 1, }', '{"a": 1 "b": true}']) {
      expect(gbnfMatches(g, bad), bad).toBe(false);
    }
  });

  it("resolves local $ref and stops recursive schemas at the depth limit", () => {
    const g = jsonSchemaToGbnf({
      $defs: { P: { type: "object", properties: { x: { type: "integer" } }, required: ["x"] } },
      type: "object",
      properties: { p: { $ref: "#/$defs/P" } },
      required: ["p"],
    });
    wellFormed(g);
    expect(gbnfMatches(g, '{"p": {"x": 5}}')).toBe(true);
    const recursive = jsonSchemaToGbnf({
      $defs: { N: { type: "object", properties: { next: { $ref: "#/$defs/N" } }, required: ["next"] } },
      $ref: "#/$defs/N",
    });
    wellFormed(recursive);
    expect(recursive.length).toBeLessThan(20_000);
  });

  it("bounds arrays by minItems/maxItems, tuples, allOf and nullable", () => {
    const g = jsonSchemaToGbnf({
      type: "object",
      properties: {
        two: { type: "array", items: { type: "integer" }, minItems: 2, maxItems: 2 },
        tuple: { type: "array", prefixItems: [{ type: "string" }, { type: "boolean" }] },
        merged: {
          allOf: [
            { type: "object", properties: { a: { type: "integer" } }, required: ["a"] },
            { properties: { b: { type: "string" } } },
          ],
        },
        maybe: { type: "integer", nullable: true },
      },
      required: ["two", "tuple", "merged", "maybe"],
    });
    wellFormed(g);
    expect(gbnfMatches(g, '{"two": [1, 2], "tuple": ["s", true], "merged": {"a": 1, "b": "x"}, "maybe": null}')).toBe(
      true,
    );
    expect(gbnfMatches(g, '{"two": [1], "tuple": ["s", true], "merged": {"a": 1}, "maybe": 3}')).toBe(false);
  });

  it("gives any bounded object for a missing or unparsable tool schema", () => {
    for (const schemaText of ["", "not json", "{}", "[1]"]) {
      const json = new JsonSchemaGrammar();
      const g = json.rules.toGrammar(json.toolArguments(schemaText, "args"));
      wellFormed(g);
      expect(gbnfMatches(g, "{}")).toBe(true);
      expect(gbnfMatches(g, '{"a": [1, null], "b": {"c": "d"}}')).toBe(true);
      expect(gbnfMatches(g, "[]")).toBe(false);
    }
  });
});
