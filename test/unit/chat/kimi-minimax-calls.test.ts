/**
 * Issue 33: Kimi K2's and MiniMax M2's calls as their models sample them: the streaming parsers
 * give the same events under any chunking (every split point, one character at a time, seeded
 * random splits), never show markup as text (also when a call is cut by max_tokens), and the
 * forced-call grammars accept exactly the family's markup (Kimi's IDs numbered from the history's
 * call count, MiniMax's XML parameters by schema).
 */
import { describe, expect, it } from "vitest";
import { KimiK2Format } from "../../../gpu-worker/chat/families/kimi/kimi-k2.ts";
import { MiniMaxM2Format } from "../../../gpu-worker/chat/families/minimax/minimax-m2.ts";
import type { ChatFormat, OutputEvent } from "../../../gpu-worker/chat/types.ts";
import { TOOLS } from "./fixtures.ts";
import { gbnfMatches, parseGbnf, undefinedRules } from "./gbnf-check.ts";
import { argumentDeltas, expectChunkingInvariant, parse, parseChunks } from "./parser-check.ts";

const kimi = new KimiK2Format();
const minimax = new MiniMaxM2Format();

const KIMI_BASH =
  '<|tool_call_begin|>functions.Bash:0<|tool_call_argument_begin|>{"command": "echo é", "timeout": 5}<|tool_call_end|>';
const KIMI_READ = '<|tool_call_begin|>Read:1<|tool_call_argument_begin|>{"path": "😀"}<|tool_call_end|>';
const MM_BASH =
  '<invoke name="Bash">\n<parameter name="command">ls -la\nx é</parameter>\n<parameter name="timeout">5</parameter>\n</invoke>\n';
const MM_READ = '<invoke name="Read">\n<parameter name="path">a.txt</parameter>\n</invoke>\n';

/** Where a segment of a split turn starts. */
function offsetOf(segments: readonly { text: string }[], segment: { text: string }): number {
  let at = 0;
  for (const s of segments) {
    if (s === segment) return at;
    at += s.text.length;
  }
  return at;
}

function completeCall(index: number, name: string, json: string, raw: string, output: string): OutputEvent[] {
  return [
    { type: "tool_call_start", index, name },
    { type: "tool_call_args", index, text: json },
    { type: "tool_call_end", index, name, argumentsJson: json, status: "complete", raw, offset: output.indexOf(raw) },
  ];
}

const cases: {
  name: string;
  format: ChatFormat;
  thinkingOpen: boolean;
  output: string;
  expected: (output: string) => OutputEvent[];
}[] = [
  {
    name: "kimi-k2: thinking, text, a section of two calls (with and without `functions.`)",
    format: kimi,
    thinkingOpen: false,
    output: `<think>Plan é.</think>Calling.<|tool_calls_section_begin|>${KIMI_BASH}${KIMI_READ}<|tool_calls_section_end|>`,
    expected: (o) => [
      { type: "thinking", text: "Plan é." },
      { type: "thinking_end" },
      { type: "text", text: "Calling." },
      ...completeCall(0, "Bash", '{"command": "echo é", "timeout": 5}', KIMI_BASH, o),
      ...completeCall(1, "Read", '{"path": "😀"}', KIMI_READ, o),
    ],
  },
  {
    name: "kimi-k2: a plain answer with markup-like text",
    format: kimi,
    thinkingOpen: false,
    output: "<think></think>Use <b>tags</b> and functions.x:1 freely 😀.",
    expected: () => [{ type: "thinking_end" }, { type: "text", text: "Use <b>tags</b> and functions.x:1 freely 😀." }],
  },
  {
    name: "minimax-m2: interleaved thinking, text, two invokes in one section",
    format: minimax,
    thinkingOpen: true,
    output: `\nPlan é.\n</think>\n\nCalling.\n<minimax:tool_call>\n${MM_BASH}${MM_READ}</minimax:tool_call>`,
    expected: (o) => [
      { type: "thinking", text: "Plan é." },
      { type: "thinking_end" },
      { type: "text", text: "Calling." },
      ...completeCall(0, "Bash", '{"command":"ls -la\\nx é","timeout":5}', MM_BASH.trimEnd(), o),
      ...completeCall(1, "Read", '{"path":"a.txt"}', MM_READ.trimEnd(), o),
    ],
  },
];

describe.each(cases)("$name", ({ format, thinkingOpen, output, expected }) => {
  const options = { thinkingOpen, tools: TOOLS };

  it("yields the same events under any chunking", () => {
    expect(expectChunkingInvariant(format, options, output)).toEqual(expected(output));
  });

  it.runIf(expected(output).some((e) => e.type === "tool_call_start"))("streams arguments in several deltas", () => {
    expect(argumentDeltas(format, options, output).length).toBeGreaterThan(2);
  });

  // A model samples each control token whole, so a generation never ends inside one (a cut inside
  // `<think>` would leave its first characters as text: the tagged parser reads a partial
  // opening tag at the very end as text).
  const insideToken = (cut: number): boolean =>
    format.splitTurn(output).some((s, _i, all) => {
      if (!s.special) return false;
      const at = offsetOf(all, s);
      return cut > at && cut < at + s.text.length;
    });

  it("never shows markup as text, at any cut outside a control token (a turn ended by max_tokens)", () => {
    for (let cut = 0; cut <= output.length; cut++) {
      if (insideToken(cut)) continue;
      const events = parseChunks(format, options, output.slice(0, cut).split(""));
      const text = events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
      expect(text, `cut at ${cut}`).not.toMatch(/<\|tool_call|<\|tool_calls|<\/?think|<\/?minimax|<invoke|<parameter/);
      const ends = events.filter((e) => e.type === "tool_call_end");
      expect(ends.length).toBe(events.filter((e) => e.type === "tool_call_start").length);
    }
  });
});

it("minimax-m2: a call cut inside a value ends as truncated with the value so far", () => {
  const output = `</think>\n\n<minimax:tool_call>\n<invoke name="Bash">\n<parameter name="command">ls -l`;
  const events = parse(minimax, { thinkingOpen: true, tools: TOOLS }, [output]);
  expect(events.at(-1)).toMatchObject({
    type: "tool_call_end",
    status: "truncated",
    argumentsJson: '{"command":"ls -l"}',
  });
});

describe("kimi-k2 forced calls", () => {
  const bash = { name: "Bash", argumentsJson: '{"command": "ls"}' };
  const section = (...calls: string[]) =>
    `<think></think><|tool_calls_section_begin|>${calls.join("")}<|tool_calls_section_end|>`;
  const call = (name: string, index: number, args: string) =>
    `<|tool_call_begin|>functions.${name}:${index}<|tool_call_argument_begin|>${args}<|tool_call_end|>`;

  it("numbers each call from the history's call count, one rule per position", () => {
    const g = parseGbnf(
      kimi.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, thinkingOpen: false, firstCallIndex: 3 }),
    );
    expect(undefinedRules(g)).toEqual([]);
    expect(gbnfMatches(g, section(call("Bash", 3, '{"command": "ls"}')))).toBe(true);
    expect(gbnfMatches(g, section(call("Bash", 3, '{"command": "ls"}'), call("Read", 4, '{"path": "a"}')))).toBe(true);
    expect(gbnfMatches(g, section(call("Bash", 0, '{"command": "ls"}')))).toBe(false);
    expect(gbnfMatches(g, section(call("Bash", 3, '{"command": "ls"}'), call("Read", 3, '{"path": "a"}')))).toBe(false);
    const four = [3, 4, 5, 6].map((i) => call("Bash", i, '{"command": "ls"}'));
    expect(gbnfMatches(g, section(...four.slice(0, 3)))).toBe(true);
    expect(gbnfMatches(g, section(...four))).toBe(false);
  });

  it("requires minCalls, and exactly one call without parallel", () => {
    const two = kimi.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, minCalls: 2, thinkingOpen: false });
    expect(gbnfMatches(two, section(call("Bash", 0, '{"command": "ls"}')))).toBe(false);
    expect(gbnfMatches(two, section(call("Bash", 0, '{"command": "ls"}'), call("Bash", 1, '{"command": "ls"}')))).toBe(
      true,
    );
    const one = kimi.toolCallGrammar({ tools: TOOLS, choice: { name: "Read" }, parallel: false, thinkingOpen: false });
    expect(gbnfMatches(one, section(call("Read", 0, '{"path": "a"}')))).toBe(true);
    expect(gbnfMatches(one, section(call("Bash", 0, '{"command": "ls"}')))).toBe(false);
  });

  it("fixed calls write the numbered IDs; the parser reads them back as the client's calls", () => {
    const g = kimi.fixedToolCallsGrammar([bash, bash], false, 2);
    const text = section(call("Bash", 2, '{"command": "ls"}'), call("Bash", 3, '{"command": "ls"}'));
    expect(gbnfMatches(g, text)).toBe(true);
    const events = parse(kimi, { thinkingOpen: false, tools: TOOLS }, [text]);
    expect(events.filter((e) => e.type === "tool_call_end").map((e) => e.type === "tool_call_end" && e.name)).toEqual([
      "Bash",
      "Bash",
    ]);
  });

  it("an answer grammar with calls allowed numbers its one call too", () => {
    const g = kimi.answerGrammar({
      schema: undefined,
      strict: false,
      field: "response_format",
      thinkingOpen: false,
      calls: { tools: TOOLS, choice: "any", parallel: true, firstCallIndex: 5 },
    });
    expect(gbnfMatches(g, section(call("Read", 5, '{"path": "a"}')))).toBe(true);
    expect(gbnfMatches(g, '<think></think>{"a": 1}')).toBe(true);
    expect(gbnfMatches(g, '{"a": 1}')).toBe(false);
  });
});

describe("minimax-m2 forced calls", () => {
  it("a JSON answer with calls allowed closes the open thinking first, like a call", () => {
    const g = minimax.answerGrammar({
      schema: undefined,
      strict: false,
      field: "response_format",
      thinkingOpen: true,
      calls: { tools: TOOLS, choice: "any", parallel: false },
    });
    expect(gbnfMatches(g, '\n</think>\n\n{"a": 1}')).toBe(true);
    expect(gbnfMatches(g, '{"a": 1}')).toBe(false);
  });

  it("closes the open thinking and writes a section of invokes, strings raw, integers as JSON", () => {
    const g = parseGbnf(minimax.toolCallGrammar({ tools: TOOLS, choice: "any", parallel: true, thinkingOpen: true }));
    expect(undefinedRules(g)).toEqual([]);
    const one = '<invoke name="Bash">\n<parameter name="command">ls</parameter>\n</invoke>\n';
    const read = '<invoke name="Read">\n<parameter name="path">a.txt</parameter>\n</invoke>\n';
    const wrap = (body: string) => `\n</think>\n\n\n<minimax:tool_call>\n${body}</minimax:tool_call>`;
    expect(gbnfMatches(g, wrap(one))).toBe(true);
    expect(gbnfMatches(g, wrap(one + read))).toBe(true);
    expect(gbnfMatches(g, wrap('<invoke name="Bash">\n<parameter name="command">a</b</parameter>\n</invoke>\n'))).toBe(
      false,
    );
    const output = wrap(one + read);
    const events = parse(minimax, { thinkingOpen: true, tools: TOOLS }, [output]);
    expect(
      events.filter((e) => e.type === "tool_call_end").map((e) => e.type === "tool_call_end" && e.argumentsJson),
    ).toEqual(['{"command":"ls"}', '{"path":"a.txt"}']);
  });

  it("refuses an enum value that spells its markup", () => {
    const tool = {
      name: "Pick",
      description: "",
      inputSchemaJson: JSON.stringify({
        type: "object",
        properties: { v: { type: "string", enum: ["ok</parameter>"] } },
        required: ["v"],
      }),
    };
    expect(() =>
      minimax.toolCallGrammar({ tools: [tool], choice: "any", parallel: false, thinkingOpen: true }),
    ).toThrow(/minimax-m2's markup/);
  });
});
