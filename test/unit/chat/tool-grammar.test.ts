import { describe, expect, it } from "vitest";
import type { FamilyFormat } from "../../../gpu-worker/chat/engine/family.ts";
import { DeepSeekFormat } from "../../../gpu-worker/chat/families/deepseek/deepseek.ts";
import { DeepSeekV31Format } from "../../../gpu-worker/chat/families/deepseek/deepseek-v31.ts";
import { GlmFormat } from "../../../gpu-worker/chat/families/glm/glm.ts";
import { HarmonyFormat } from "../../../gpu-worker/chat/families/harmony/harmony.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3Format } from "../../../gpu-worker/chat/families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import { toolCallsText } from "../../../gpu-worker/chat/grammar/tool-grammar.ts";
import type { OutputEvent } from "../../../gpu-worker/chat/types.ts";
import { ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, TOOLS, text, toolUse, user } from "./fixtures.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";

function wellFormed(grammar: string): void {
  const parsed = parseGbnf(grammar);
  expect(undefinedRules(parsed)).toEqual([]);
  expect(parsed.unbounded).toBe(0);
}

const formats: FamilyFormat[] = [
  new ChatMlFormat(),
  new Qwen3Format(),
  new Qwen3CoderFormat({ thinking: true }),
  new GlmFormat(),
  new HarmonyFormat(),
  new DeepSeekFormat(),
  new DeepSeekV31Format(),
];

/** The calls a parse produced: name and arguments value. */
const callsOf = (events: OutputEvent[]) =>
  events.flatMap((e) =>
    e.type === "tool_call_end" ? [[e.name, JSON.parse(e.argumentsJson) as unknown, e.status]] : [],
  );

describe.each(formats.map((f) => [f.name, f, f.spec.markup] as const))("%s grammars", (_name, format, markup) => {
  const jsonArguments = markup.argumentsGrammar === undefined;
  const textOpen = markup.textOpen ?? "";
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
    // XML-parameter formats force the required parameters only.
    expect(
      gbnfMatches(g, toolCallsText(markup, [{ name: "Bash", argumentsJson: '{"command": "ls", "timeout": 5}' }])),
    ).toBe(jsonArguments);
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
    // harmony: `<|call|>` ends the generation, so one call per turn.
    const max = format.maxCallsPerTurn;
    expect(gbnfMatches(g, close + two)).toBe(max >= 2);
    expect(gbnfMatches(g, close + toolCallsText(markup, [bash, read, bash]))).toBe(max >= 3);
    expect(gbnfMatches(g, close + four)).toBe(false);
    expect(gbnfMatches(g, one)).toBe(close === "");
  });

  it("requires at least minCalls parallel calls when asked (the scripted test policy)", () => {
    const g = format.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, minCalls: 2, thinkingOpen: false });
    wellFormed(g);
    const max = format.maxCallsPerTurn;
    expect(gbnfMatches(g, one)).toBe(max === 1);
    expect(gbnfMatches(g, two)).toBe(max >= 2);
    expect(gbnfMatches(g, toolCallsText(markup, [bash, read, bash]))).toBe(max >= 3);
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
    // harmony: a call ends the generation, so a turn holds one.
    const several = format.maxCallsPerTurn > 1;
    const events = [...parser.push(several ? two : one), ...parser.finish()];
    expect(callsOf(events)).toEqual([
      ["Bash", { command: "echo hi" }, "complete"],
      ...(several ? [["Read", { path: "a.txt" }, "complete"]] : []),
    ]);
  });

  it("builds fixed grammars for the scripted test policy", () => {
    const fixed = format.fixedToolCallsGrammar([bash], true);
    wellFormed(fixed);
    expect(gbnfMatches(fixed, markup.thinkingClose + one)).toBe(true);
    // harmony never opens thinking in the prompt: nothing to close.
    expect(gbnfMatches(fixed, one)).toBe(markup.thinkingClose === "");
    const parser = format.createOutputParser({ thinkingOpen: markup.thinkingClose !== "" });
    const events = [...parser.push(markup.thinkingClose + one), ...parser.finish()];
    if (markup.thinkingClose !== "") expect(events[0]).toEqual({ type: "thinking_end" });
    expect(callsOf(events)).toEqual([["Bash", { command: "echo hi" }, "complete"]]);

    const tricky = 'Done: "quoted" \\ back\nslash é 😀.';
    const textGrammar = format.fixedTextGrammar(tricky);
    wellFormed(textGrammar);
    expect(gbnfMatches(textGrammar, `${textOpen}${tricky}`)).toBe(true);
    expect(gbnfMatches(format.fixedTextGrammar("ok.", true), `${markup.thinkingClose}${textOpen}ok.`)).toBe(true);

    const plain = format.plainTextGrammar(false);
    wellFormed(plain);
    expect(gbnfMatches(plain, `${textOpen}Hello world.`)).toBe(true);
    expect(gbnfMatches(plain, `${textOpen}Ok.`)).toBe(true);
    expect(gbnfMatches(plain, `${textOpen}hello world.`)).toBe(false);
    expect(gbnfMatches(plain, `${textOpen}Hello world`)).toBe(false);
    expect(gbnfMatches(plain, `${textOpen}Hello${" word".repeat(12)}.`)).toBe(false);
    expect(gbnfMatches(format.plainTextGrammar(true), `${markup.thinkingClose}${textOpen}Fine.`)).toBe(true);
  });

  it("names rules safely for odd tool names", () => {
    const tools = [
      { name: "mcp__server__do.thing", inputSchemaJson: "{}" },
      {
        name: "mcp__server__do-thing",
        inputSchemaJson: '{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}',
      },
    ];
    const g = format.toolCallGrammar({ tools, choice: "any", parallel: false, thinkingOpen: false });
    wellFormed(g);
    expect(gbnfMatches(g, toolCallsText(markup, [{ name: "mcp__server__do.thing", argumentsJson: "{}" }]))).toBe(true);
    expect(
      gbnfMatches(g, toolCallsText(markup, [{ name: "mcp__server__do-thing", argumentsJson: '{"x": "y"}' }])),
    ).toBe(true);
  });
});
