/**
 * Every family's streaming parser on what its models sample: the same events under any chunking,
 * arguments streamed in several deltas, markup never in text.
 */
import { describe, expect, it } from "vitest";
import { DeepSeekFormat } from "../../../gpu-worker/chat/families/deepseek/deepseek.ts";
import { DeepSeekV31Format } from "../../../gpu-worker/chat/families/deepseek/deepseek-v31.ts";
import { GlmFormat } from "../../../gpu-worker/chat/families/glm/glm.ts";
import { HarmonyFormat } from "../../../gpu-worker/chat/families/harmony/harmony.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3Format } from "../../../gpu-worker/chat/families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import type { ChatFormat, OutputEvent } from "../../../gpu-worker/chat/types.ts";
import { TOOLS } from "./fixtures.ts";
import { argumentDeltas, expectChunkingInvariant, parseChunks } from "./parser-check.ts";

const end = (index: number, name: string, argumentsJson: string, raw: string, output: string): OutputEvent => ({
  type: "tool_call_end",
  index,
  name,
  argumentsJson,
  status: "complete",
  raw,
  offset: output.indexOf(raw),
});

const call = (index: number, name: string, args: string, raw: string, output: string, json = args): OutputEvent[] => [
  { type: "tool_call_start", index, name },
  { type: "tool_call_args", index, text: json },
  end(index, name, json, raw, output),
];

const HERMES_BASH = '<tool_call>\n{"name": "Bash", "arguments": {"command": "echo é"}}\n</tool_call>';
const HERMES_READ = '<tool_call>\n{"name": "Read", "arguments": {"path": "a.txt"}}\n</tool_call>';
const CODER_BASH =
  '<tool_call>\n<function=Bash>\n<parameter=command>\necho "hi" é\n</parameter>\n<parameter=timeout>\n5\n</parameter>\n</function>\n</tool_call>';
const GLM_BASH =
  "<tool_call>Bash\n<arg_key>command</arg_key>\n<arg_value>ls -la\nx</arg_value>\n<arg_key>timeout</arg_key>\n<arg_value>5</arg_value>\n</tool_call>";
const V31_BASH = '<｜tool▁call▁begin｜>Bash<｜tool▁sep｜>{"command": "ls"}<｜tool▁call▁end｜>';
const V31_READ = '<｜tool▁call▁begin｜>Read<｜tool▁sep｜>{"path": "😀"}<｜tool▁call▁end｜>';
const DS_BASH = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>Bash\n```json\n{"command": "ls"}\n```<｜tool▁call▁end｜>';
const DS_READ = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>Read\n```json\n{"path": "😀"}\n```<｜tool▁call▁end｜>';
const HARMONY_CALL = ' to=functions.Bash<|channel|>commentary json<|message|>{"command": "ls -la"}';

interface Case {
  name: string;
  format: ChatFormat;
  thinkingOpen: boolean;
  output: string;
  expected: (output: string) => OutputEvent[];
}

const cases: Case[] = [
  {
    name: "chatml: thinking, text and two calls",
    format: new ChatMlFormat(),
    thinkingOpen: true,
    output: `\nLet me think about é and 😀.\n\n</think>\n\nSure 🚀.\n${HERMES_BASH}\n${HERMES_READ}`,
    expected: (o) => [
      { type: "thinking", text: "Let me think about é and 😀." },
      { type: "thinking_end" },
      { type: "text", text: "Sure 🚀." },
      ...call(0, "Bash", "", HERMES_BASH, o, '{"command": "echo é"}'),
      ...call(1, "Read", "", HERMES_READ, o, '{"path": "a.txt"}'),
    ],
  },
  {
    name: "qwen3: the model opens <think> itself",
    format: new Qwen3Format(),
    thinkingOpen: false,
    output: `<think>\nPlan.\n</think>\n\nOk.\n${HERMES_READ}`,
    expected: (o) => [
      { type: "thinking", text: "Plan." },
      { type: "thinking_end" },
      { type: "text", text: "Ok." },
      ...call(0, "Read", "", HERMES_READ, o, '{"path": "a.txt"}'),
    ],
  },
  {
    name: "qwen3-coder: XML parameters read by schema type",
    format: new Qwen3CoderFormat({ thinking: true }),
    thinkingOpen: true,
    output: `Plan.\n</think>\n\nSure.\n\n${CODER_BASH}`,
    expected: (o) => [
      { type: "thinking", text: "Plan." },
      { type: "thinking_end" },
      { type: "text", text: "Sure." },
      ...call(0, "Bash", "", CODER_BASH, o, '{"command":"echo \\"hi\\" é","timeout":5}'),
    ],
  },
  {
    name: "glm: think block, then arg_key/arg_value pairs",
    format: new GlmFormat(),
    thinkingOpen: false,
    output: `\n<think>Plan 😀.</think>\nOk.\n${GLM_BASH}`,
    expected: (o) => [
      { type: "thinking", text: "Plan 😀." },
      { type: "thinking_end" },
      { type: "text", text: "Ok." },
      ...call(0, "Bash", "", GLM_BASH, o, '{"command":"ls -la\\nx","timeout":5}'),
    ],
  },
  {
    name: "harmony: analysis, then a call",
    format: new HarmonyFormat(),
    thinkingOpen: false,
    output: `<|channel|>analysis<|message|>Plan é.<|end|><|start|>assistant${HARMONY_CALL}`,
    expected: (o) => [
      { type: "thinking", text: "Plan é." },
      { type: "thinking_end" },
      ...call(0, "Bash", "", `<|start|>assistant${HARMONY_CALL}`, o, '{"command": "ls -la"}'),
    ],
  },
  {
    name: "harmony: the recipient after the channel, with <|constrain|>",
    format: new HarmonyFormat(),
    thinkingOpen: false,
    output: '<|channel|>commentary to=functions.Read <|constrain|>json<|message|>{"path": "a"}<|call|>',
    expected: (o) => [...call(0, "Read", "", o.replace("<|call|>", ""), o, '{"path": "a"}')],
  },
  {
    name: "harmony: a preamble and a final answer",
    format: new HarmonyFormat(),
    thinkingOpen: false,
    output: "<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>Hello 😀 <b>.",
    expected: () => [
      { type: "thinking", text: "x" },
      { type: "thinking_end" },
      { type: "text", text: "Hello 😀 <b>." },
    ],
  },
  {
    name: "deepseek: a block of two ```json calls",
    format: new DeepSeekFormat(),
    thinkingOpen: true,
    output: `Plan é.</think>Calling.<｜tool▁calls▁begin｜>${DS_BASH}\n${DS_READ}<｜tool▁calls▁end｜>`,
    expected: (o) => [
      { type: "thinking", text: "Plan é." },
      { type: "thinking_end" },
      { type: "text", text: "Calling." },
      ...call(0, "Bash", "", DS_BASH, o, '{"command": "ls"}'),
      ...call(1, "Read", "", DS_READ, o, '{"path": "😀"}'),
    ],
  },
  {
    name: "deepseek-v3.1: bare JSON calls",
    format: new DeepSeekV31Format(),
    thinkingOpen: true,
    output: `Plan.</think>Calling.<｜tool▁calls▁begin｜>${V31_BASH}${V31_READ}<｜tool▁calls▁end｜>`,
    expected: (o) => [
      { type: "thinking", text: "Plan." },
      { type: "thinking_end" },
      { type: "text", text: "Calling." },
      ...call(0, "Bash", "", V31_BASH, o, '{"command": "ls"}'),
      ...call(1, "Read", "", V31_READ, o, '{"path": "😀"}'),
    ],
  },
];

describe.each(cases)("$name", ({ format, thinkingOpen, output, expected }) => {
  const options = { thinkingOpen, tools: TOOLS };

  it("yields the same events under any chunking", () => {
    expect(expectChunkingInvariant(format, options, output)).toEqual(expected(output));
  });

  it.runIf(expected(output).some((e) => e.type === "tool_call_start"))(
    "streams each call's arguments in several deltas as they arrive",
    () => {
      expect(argumentDeltas(format, options, output).length).toBeGreaterThan(2);
    },
  );

  it("never shows markup as text", () => {
    const texts = parseChunks(format, options, output.split("")).flatMap((e) => (e.type === "text" ? [e.text] : []));
    expect(texts.join("")).not.toMatch(/<\/?(tool_call|think|function|arg_key)|<\|(channel|message|start)|<｜/);
  });
});

it("chatml: text streams promptly and only a possible tag is held back", () => {
  const p = new ChatMlFormat().createOutputParser({ thinkingOpen: false });
  expect(p.push("Hello wor")).toEqual([{ type: "text", text: "Hello wor" }]);
  expect(p.push("ld <tool_")).toEqual([{ type: "text", text: "ld " }]);
  expect(p.push("box")).toEqual([{ type: "text", text: "<tool_box" }]);
  expect(p.push("\n")).toEqual([]);
  expect(p.push("more")).toEqual([{ type: "text", text: "\nmore" }]);
  expect(p.finish()).toEqual([]);
  const t = new ChatMlFormat().createOutputParser({ thinkingOpen: true });
  expect(t.push("I think </thi")).toEqual([{ type: "thinking", text: "I think " }]);
  expect(t.push("nk>")).toEqual([{ type: "thinking_end" }]);
  const [hi, lo] = "😀".split("");
  const s = new ChatMlFormat().createOutputParser({ thinkingOpen: false });
  expect(s.push(`a${hi}`)).toEqual([{ type: "text", text: "a" }]);
  expect(s.push(`${lo}b`)).toEqual([{ type: "text", text: "😀b" }]);
});

it("chatml: another key order or stringified arguments is read once the span closes", () => {
  const odd = '<tool_call>{"arguments":{"b": [1,2]},  "name":"Bash"}</tool_call>';
  const stringified = '<tool_call>\n{"name": "Read", "arguments": "{\\"path\\": \\"x\\"}"}\n</tool_call>';
  const output = `x\n${odd}${stringified}`;
  expect(expectChunkingInvariant(new ChatMlFormat(), { thinkingOpen: false }, output)).toEqual([
    { type: "text", text: "x" },
    ...call(0, "Bash", "", odd, output, '{"b":[1,2]}'),
    ...call(1, "Read", "", stringified, output, '{"path":"x"}'),
  ]);
});
