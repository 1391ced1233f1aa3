/**
 * Codex's freeform `apply_patch` tool (its Lark grammar, as Codex 0.169 sends it) constrains a
 * forced call's raw input in every family: a valid patch matches, a malformed one does not, and
 * the call parses back to exactly the patch text. Lark features outside the served subset are
 * refused by name.
 */
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
import { grammarFromRegex, LarkGrammarError, parseLark } from "../../../shared/lark/lark-grammar.ts";
import { APPLY_PATCH_LARK, CODEX_EXEC_LARK, CUSTOM_SCHEMA } from "./codex-apply-patch.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";

const applyPatch = {
  name: "apply_patch",
  inputSchemaJson: CUSTOM_SCHEMA,
  inputGrammar: { syntax: "lark", definition: APPLY_PATCH_LARK },
};

const PATCH = [
  "*** Begin Patch",
  "*** Add File: hello.txt",
  '+Hello "world" \\ tab\there',
  "+",
  "*** Update File: src/app.py",
  "*** Move to: src/main.py",
  "@@ def greet():",
  '-print("Hi")',
  '+print("Hello, world!")',
  " return",
  "*** Delete File: obsolete.txt",
  "*** End Patch",
  "",
].join("\n");

const formats: FamilyFormat[] = [
  new ChatMlFormat(),
  new Qwen3Format(),
  new Qwen3CoderFormat(),
  new GlmFormat(),
  new HarmonyFormat(),
  new DeepSeekFormat(),
  new DeepSeekV31Format(),
];

describe.each(formats.map((f) => [f.name, f] as const))("%s: a forced apply_patch call", (_name, format) => {
  const markup = format.spec.markup;
  const grammar = format.toolCallGrammar({
    tools: [applyPatch],
    choice: { name: "apply_patch" },
    parallel: false,
    thinkingOpen: false,
  });
  const call = (input: string) =>
    toolCallsText(markup, [{ name: "apply_patch", argumentsJson: `{"input": ${JSON.stringify(input)}}` }]);

  it("is a well-formed grammar that admits a valid patch and parses back to its exact text", () => {
    expect(undefinedRules(parseGbnf(grammar))).toEqual([]);
    expect(gbnfMatches(grammar, call(PATCH))).toBe(true);
    const parser = format.createOutputParser({ thinkingOpen: false, tools: [applyPatch] });
    const events = [...parser.push(call(PATCH)), ...parser.finish()];
    const ends = events.filter((e) => e.type === "tool_call_end");
    expect(ends.map((e) => [e.name, e.status])).toEqual([["apply_patch", "complete"]]);
    expect(JSON.parse(ends[0]?.argumentsJson ?? "")).toEqual({ input: PATCH });
  });

  it("refuses input outside the grammar", () => {
    expect(gbnfMatches(grammar, call("rm -rf /\n"))).toBe(false);
    expect(gbnfMatches(grammar, call("*** Begin Patch\n*** End Patch\n"))).toBe(false); // hunk+
    expect(gbnfMatches(grammar, call("*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch\n"))).toBe(false);
  });
});

describe("the served Lark subset", () => {
  it("reads Codex's grammar: rules, terminals, aliases, imports", () => {
    const grammar = parseLark(APPLY_PATCH_LARK);
    expect([...grammar.rules.keys()]).toContain("change_line");
    expect(grammar.rules.get("LF")).toEqual({ k: "lit", text: "\n" });
  });

  it.each([
    ['%ignore WS\nstart: "a"', /%ignore/],
    ['start: "a"i', /flags/],
    ['start: "a".."z"', /not supported/],
    ["start: /a/i", /flags/],
    ["start: /^a$/", /anchor/],
    ["start: /(?=a)b/", /lookaround/],
    ["start: /(a)\\1/", /\\1/],
    ['start: x\nx: x "a" | "b"', /left-recursive/],
    ["start: missing", /undefined 'missing'/],
    ['other: "a"', /no 'start'/],
    ["%import common.ESCAPED_STRING\nstart: ESCAPED_STRING", /not supported/],
    ['start.2: "a"', /expected "name: …"/],
  ])("refuses %j", (source, message) => {
    expect(() => parseLark(source)).toThrow(LarkGrammarError);
    expect(() => parseLark(source)).toThrow(message);
  });

  it("a regex-syntax grammar and classes, escapes and counted repeats", () => {
    const tool = {
      name: "t",
      inputSchemaJson: CUSTOM_SCHEMA,
      inputGrammar: { syntax: "regex", definition: "[a-c]{2,3}\\d+(x|y)?" },
    };
    expect(grammarFromRegex("[a-c]{2,3}\\d+(x|y)?").rules.size).toBe(1);
    const chatml = new ChatMlFormat();
    const g = chatml.toolCallGrammar({ tools: [tool], choice: { name: "t" }, parallel: false, thinkingOpen: false });
    const call = (input: string) =>
      toolCallsText(chatml.spec.markup, [{ name: "t", argumentsJson: `{"input": ${JSON.stringify(input)}}` }]);
    expect(gbnfMatches(g, call("ab12x"))).toBe(true);
    expect(gbnfMatches(g, call("abc7"))).toBe(true);
    expect(gbnfMatches(g, call("a1"))).toBe(false);
    expect(gbnfMatches(g, call("abcd1"))).toBe(false);
  });

  it("reads Codex 0.171's code-mode `exec` grammar: a negated escape inside a class ([\\s\\S] is any character)", () => {
    const exec = {
      name: "functions.exec",
      inputSchemaJson: CUSTOM_SCHEMA,
      inputGrammar: { syntax: "lark", definition: CODEX_EXEC_LARK },
    };
    const chatml = new ChatMlFormat();
    const g = chatml.toolCallGrammar({ tools: [exec], choice: "any", parallel: false, thinkingOpen: false });
    const call = (input: string) =>
      toolCallsText(chatml.spec.markup, [{ name: exec.name, argumentsJson: `{"input": ${JSON.stringify(input)}}` }]);
    expect(gbnfMatches(g, call('const r = await tools.exec_command({cmd: "echo hi"});\ntext(r.output);'))).toBe(true);
    expect(gbnfMatches(g, call('// @exec: {"yield_time_ms": 1000}\ntext("é ✓ \\u{1F600}");'))).toBe(true);
    expect(gbnfMatches(g, call(""))).toBe(false);
    expect(grammarFromRegex("[^\\D]+").rules.size).toBe(1);
  });

  it("an unsupported grammar is the worker's 400 naming the tool", () => {
    const tool = { ...applyPatch, inputGrammar: { syntax: "lark", definition: "%ignore WS\nstart: WS" } };
    const build = () =>
      new ChatMlFormat().toolCallGrammar({ tools: [tool], choice: "any", parallel: false, thinkingOpen: false });
    expect(build).toThrow(SchemaGrammarError);
    expect(build).toThrow(/tools: the grammar of tool 'apply_patch'/);
  });

  it("XML-argument families cannot take a literal '<', and their classes exclude it", () => {
    const tool = { ...applyPatch, inputGrammar: { syntax: "lark", definition: 'start: "</parameter>"' } };
    const build = () =>
      new Qwen3CoderFormat().toolCallGrammar({ tools: [tool], choice: "any", parallel: false, thinkingOpen: false });
    expect(build).toThrow(/literal with '<'/);
    const coder = new Qwen3CoderFormat();
    const g = coder.toolCallGrammar({ tools: [applyPatch], choice: "any", parallel: false, thinkingOpen: false });
    const withAngle = PATCH.replace("+Hello", "+<Hello");
    const call = toolCallsText(coder.spec.markup, [
      { name: "apply_patch", argumentsJson: `{"input": ${JSON.stringify(withAngle)}}` },
    ]);
    expect(gbnfMatches(g, call)).toBe(false);
  });
});
