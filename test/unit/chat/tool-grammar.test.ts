import { describe, expect, it } from "vitest";
import { CHATML_TOOL_MARKUP, ChatMlFormat } from "../../../gpu-worker/chat/chatml.ts";
import { DEEPSEEK_TOOL_MARKUP, DeepSeekFormat } from "../../../gpu-worker/chat/deepseek.ts";
import { type ToolCallMarkup, toolCallsText } from "../../../gpu-worker/chat/tool-grammar.ts";
import type { ChatFormat } from "../../../gpu-worker/chat/types.ts";
import { ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, TOOLS, text, toolUse, user } from "./fixtures.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";

function wellFormed(grammar: string): void {
  const parsed = parseGbnf(grammar);
  expect(undefinedRules(parsed)).toEqual([]);
  expect(parsed.unbounded).toBe(0);
}

const cases: [string, ChatFormat, ToolCallMarkup][] = [
  ["chatml", new ChatMlFormat(), CHATML_TOOL_MARKUP],
  ["deepseek", new DeepSeekFormat(), DEEPSEEK_TOOL_MARKUP],
];

describe.each(cases)("%s grammars", (_name, format, markup) => {
  const bash = { name: "Bash", argumentsJson: '{"command": "echo hi"}' };
  const read = { name: "Read", argumentsJson: '{"path": "a.txt"}' };
  const one = toolCallsText(markup, [bash]);
  const two = toolCallsText(markup, [bash, read]);
  const four = toolCallsText(markup, [bash, read, bash, read]);

  it("forces exactly one call of any tool, arguments per schema", () => {
    const g = format.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: false, thinkingOpen: false });
    wellFormed(g);
    expect(gbnfMatches(g, one)).toBe(true);
    expect(gbnfMatches(g, toolCallsText(markup, [read]))).toBe(true);
    expect(
      gbnfMatches(g, toolCallsText(markup, [{ name: "Bash", argumentsJson: '{"command": "ls", "timeout": 5}' }])),
    ).toBe(true);
    expect(gbnfMatches(g, two)).toBe(false);
    expect(gbnfMatches(g, toolCallsText(markup, [{ name: "Bash", argumentsJson: '{"timeout": 5}' }]))).toBe(false);
    expect(gbnfMatches(g, toolCallsText(markup, [{ name: "Write", argumentsJson: '{"path": "a"}' }]))).toBe(false);
    expect(gbnfMatches(g, `${one}\n`)).toBe(false);
  });

  it("allows 1..3 calls when parallel, and closes open thinking first", () => {
    const g = format.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, thinkingOpen: true });
    wellFormed(g);
    const close = markup.thinkingClose;
    expect(gbnfMatches(g, close + one)).toBe(true);
    expect(gbnfMatches(g, close + two)).toBe(true);
    expect(gbnfMatches(g, close + toolCallsText(markup, [bash, read, bash]))).toBe(true);
    expect(gbnfMatches(g, close + four)).toBe(false);
    expect(gbnfMatches(g, one)).toBe(false);
  });

  it("requires at least minCalls parallel calls when asked (the scripted test policy)", () => {
    const g = format.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, minCalls: 2, thinkingOpen: false });
    wellFormed(g);
    expect(gbnfMatches(g, one)).toBe(false);
    expect(gbnfMatches(g, two)).toBe(true);
    expect(gbnfMatches(g, toolCallsText(markup, [bash, read, bash]))).toBe(true);
    expect(gbnfMatches(g, four)).toBe(false);
  });

  it("restricts a named choice to that tool", () => {
    const g = format.toolCallGrammar({ tools: TOOLS, choice: { name: "Read" }, parallel: false, thinkingOpen: false });
    wellFormed(g);
    expect(gbnfMatches(g, toolCallsText(markup, [read]))).toBe(true);
    expect(gbnfMatches(g, one)).toBe(false);
    expect(() =>
      format.toolCallGrammar({ tools: TOOLS, choice: { name: "Nope" }, parallel: false, thinkingOpen: false }),
    ).toThrow(RangeError);
    expect(() => format.toolCallGrammar({ tools: [], choice: "any", parallel: false, thinkingOpen: false })).toThrow(
      RangeError,
    );
  });

  it("accepts what the renderer writes for a canonical tool_use, and the parser reads it back", () => {
    const r = format.render(
      conversation([user(text("go")), assistant(toolUse("t1", "Bash", '{"command": "echo hi"}')), user(text("next"))], {
        thinking: ThinkingMode.DISABLED,
      }),
    );
    expect(r.text).toContain(one);
    const g = format.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, thinkingOpen: false });
    expect(gbnfMatches(g, one)).toBe(true);
    const parser = format.createOutputParser({ thinkingOpen: false });
    const events = [...parser.push(two), ...parser.finish()];
    expect(events.map((e) => (e.type === "tool_call" ? [e.name, e.argumentsJson] : e.type))).toEqual([
      ["Bash", '{"command":"echo hi"}'],
      ["Read", '{"path":"a.txt"}'],
    ]);
  });

  it("builds fixed grammars for the scripted test policy", () => {
    const fixed = format.fixedToolCallsGrammar([bash], true);
    wellFormed(fixed);
    expect(gbnfMatches(fixed, markup.thinkingClose + one)).toBe(true);
    expect(gbnfMatches(fixed, one)).toBe(false);
    const parser = format.createOutputParser({ thinkingOpen: true });
    const events = [...parser.push(markup.thinkingClose + one), ...parser.finish()];
    expect(events).toEqual([
      { type: "thinking_end" },
      {
        type: "tool_call",
        name: "Bash",
        argumentsJson: '{"command":"echo hi"}',
        raw: expect.any(String),
        offset: expect.any(Number),
      },
    ]);

    const tricky = 'Done: "quoted" \\ back\nslash é 😀.';
    const textGrammar = format.fixedTextGrammar(tricky);
    wellFormed(textGrammar);
    expect(gbnfMatches(textGrammar, tricky)).toBe(true);
    expect(gbnfMatches(format.fixedTextGrammar("ok.", true), `${markup.thinkingClose}ok.`)).toBe(true);

    const plain = format.plainTextGrammar(false);
    wellFormed(plain);
    expect(gbnfMatches(plain, "Hello world.")).toBe(true);
    expect(gbnfMatches(plain, "Ok.")).toBe(true);
    expect(gbnfMatches(plain, "hello world.")).toBe(false);
    expect(gbnfMatches(plain, "Hello world")).toBe(false);
    expect(gbnfMatches(plain, `Hello${" word".repeat(12)}.`)).toBe(false);
    expect(gbnfMatches(format.plainTextGrammar(true), `${markup.thinkingClose}Fine.`)).toBe(true);
  });

  it("names rules safely for odd tool names", () => {
    const tools = [
      { name: "mcp__server__do.thing", inputSchemaJson: "{}" },
      { name: "mcp__server__do-thing", inputSchemaJson: '{"type":"object","properties":{"x":{"type":"string"}}}' },
    ];
    const g = format.toolCallGrammar({ tools, choice: "any", parallel: false, thinkingOpen: false });
    wellFormed(g);
    expect(gbnfMatches(g, toolCallsText(markup, [{ name: "mcp__server__do.thing", argumentsJson: "{}" }]))).toBe(true);
    expect(
      gbnfMatches(g, toolCallsText(markup, [{ name: "mcp__server__do-thing", argumentsJson: '{"x": "y"}' }])),
    ).toBe(true);
  });
});
