import { describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../../gpu-worker/chat/chatml.ts";
import { DeepSeekFormat } from "../../../gpu-worker/chat/deepseek.ts";
import type { ChatFormat, OutputEvent } from "../../../gpu-worker/chat/types.ts";

const chatml = new ChatMlFormat();
const deepseek = new DeepSeekFormat();

/** Merge adjacent text / thinking deltas: chunking may split them differently. */
function normalize(events: OutputEvent[]): OutputEvent[] {
  const out: OutputEvent[] = [];
  for (const e of events) {
    const last = out.at(-1);
    if (last && (e.type === "text" || e.type === "thinking") && last.type === e.type) last.text += e.text;
    else out.push({ ...e });
  }
  return out;
}

function parse(format: ChatFormat, thinkingOpen: boolean, chunks: string[]): OutputEvent[] {
  const parser = format.createOutputParser({ thinkingOpen });
  const events = chunks.flatMap((c) => parser.push(c));
  return normalize([...events, ...parser.finish()]);
}

/** Whole, every single split point, one UTF-16 unit at a time, and seeded random multi-splits. */
function expectChunkingInvariant(format: ChatFormat, thinkingOpen: boolean, output: string): OutputEvent[] {
  const whole = parse(format, thinkingOpen, [output]);
  for (let i = 0; i <= output.length; i++) {
    expect(parse(format, thinkingOpen, [output.slice(0, i), output.slice(i)]), `split at ${i}`).toEqual(whole);
  }
  expect(parse(format, thinkingOpen, output.split(""))).toEqual(whole);
  for (const e of whole)
    if (e.type === "tool_call") expect(output.slice(e.offset, e.offset + e.raw.length)).toBe(e.raw);
  let seed = 7;
  for (let round = 0; round < 50; round++) {
    const chunks: string[] = [];
    for (let at = 0; at < output.length; ) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const len = 1 + (seed % 9);
      chunks.push(output.slice(at, at + len));
      at += len;
    }
    expect(parse(format, thinkingOpen, chunks)).toEqual(whole);
  }
  return whole;
}

const BASH_CALL = '<tool_call>\n{"name": "Bash", "arguments": {"command": "echo é"}}\n</tool_call>';
const READ_CALL = '<tool_call>\n{"name": "Read", "arguments": {"path": "a.txt"}}\n</tool_call>';

describe("ChatML output parser", () => {
  it("parses thinking, text and two tool calls the same under any chunking", () => {
    const output = `\nLet me think about é and 😀.\n\n</think>\n\nSure, running it 🚀.\n${BASH_CALL}\n${READ_CALL}`;
    expect(expectChunkingInvariant(chatml, true, output)).toEqual([
      { type: "thinking", text: "Let me think about é and 😀." },
      { type: "thinking_end" },
      { type: "text", text: "Sure, running it 🚀." },
      {
        type: "tool_call",
        name: "Bash",
        argumentsJson: '{"command":"echo é"}',
        raw: BASH_CALL,
        offset: output.indexOf(BASH_CALL),
      },
      {
        type: "tool_call",
        name: "Read",
        argumentsJson: '{"path":"a.txt"}',
        raw: READ_CALL,
        offset: output.indexOf(READ_CALL),
      },
    ]);
  });

  it("gives each call's exact sampled bytes as raw", () => {
    const odd = '<tool_call>{"arguments":{"b": [1,2]},  "name":"Bash"}</tool_call>';
    const output = `x\n${odd}`;
    const events = expectChunkingInvariant(chatml, false, output);
    const call = events.find((e) => e.type === "tool_call");
    expect(call).toEqual({ type: "tool_call", name: "Bash", argumentsJson: '{"b":[1,2]}', raw: odd, offset: 2 });
    expect(output).toContain(call?.type === "tool_call" ? call.raw : "missing");
  });

  it("turns malformed or unterminated tool calls into text", () => {
    const output =
      'Hi <tool_call>\n{not json}\n</tool_call> and <tool_call>\n{"name": 3, "arguments": {}}\n</tool_call>\n<tool_';
    expect(expectChunkingInvariant(chatml, false, output)).toEqual([
      {
        type: "text",
        text: 'Hi <tool_call>\n{not json}\n</tool_call> and <tool_call>\n{"name": 3, "arguments": {}}\n</tool_call>\n<tool_',
      },
    ]);
    expect(parse(chatml, false, ['a\n<tool_call>\n{"name": "Bash", "arguments": {}}'])).toEqual([
      { type: "text", text: 'a\n<tool_call>\n{"name": "Bash", "arguments": {}}' },
    ]);
  });

  it("accepts arguments given as a JSON string", () => {
    const raw = '<tool_call>\n{"name": "Bash", "arguments": "{\\"command\\": \\"ls\\"}"}\n</tool_call>';
    expect(parse(chatml, false, [raw])).toEqual([
      { type: "tool_call", name: "Bash", argumentsJson: '{"command":"ls"}', raw, offset: 0 },
    ]);
  });

  it("closes an unterminated thinking block at finish", () => {
    expect(expectChunkingInvariant(chatml, true, "abc\n\n")).toEqual([
      { type: "thinking", text: "abc" },
      { type: "thinking_end" },
    ]);
    expect(parse(chatml, true, ["</think>\n\nHi"])).toEqual([{ type: "thinking_end" }, { type: "text", text: "Hi" }]);
  });

  it("streams text promptly and holds back only a possible tag", () => {
    const p = chatml.createOutputParser({ thinkingOpen: false });
    expect(p.push("Hello wor")).toEqual([{ type: "text", text: "Hello wor" }]);
    expect(p.push("ld <tool_")).toEqual([{ type: "text", text: "ld " }]);
    expect(p.push("box")).toEqual([{ type: "text", text: "<tool_box" }]);
    expect(p.push("\n")).toEqual([]);
    expect(p.push("more")).toEqual([{ type: "text", text: "\nmore" }]);
    expect(p.finish()).toEqual([]);
    const t = chatml.createOutputParser({ thinkingOpen: true });
    expect(t.push("I think </thi")).toEqual([{ type: "thinking", text: "I think " }]);
    expect(t.push("nk>")).toEqual([{ type: "thinking_end" }]);
  });

  it("keeps a surrogate pair together across chunks", () => {
    const p = chatml.createOutputParser({ thinkingOpen: false });
    const [hi, lo] = "😀".split("");
    expect(p.push(`a${hi}`)).toEqual([{ type: "text", text: "a" }]);
    expect(p.push(`${lo}b`)).toEqual([{ type: "text", text: "😀b" }]);
  });
});

const DS_BASH = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>Bash\n```json\n{"command": "ls"}\n```<｜tool▁call▁end｜>';
const DS_READ = '<｜tool▁call▁begin｜>function<｜tool▁sep｜>Read\n```json\n{"path": "😀"}\n```<｜tool▁call▁end｜>';

describe("DeepSeek output parser", () => {
  it("parses thinking, text and a block of calls the same under any chunking", () => {
    const output = `Plan é.</think>Calling.<｜tool▁calls▁begin｜>${DS_BASH}\n${DS_READ}<｜tool▁calls▁end｜>`;
    expect(expectChunkingInvariant(deepseek, true, output)).toEqual([
      { type: "thinking", text: "Plan é." },
      { type: "thinking_end" },
      { type: "text", text: "Calling." },
      {
        type: "tool_call",
        name: "Bash",
        argumentsJson: '{"command":"ls"}',
        raw: DS_BASH,
        offset: output.indexOf(DS_BASH),
      },
      {
        type: "tool_call",
        name: "Read",
        argumentsJson: '{"path":"😀"}',
        raw: DS_READ,
        offset: output.indexOf(DS_READ),
      },
    ]);
  });

  it("gives identical calls in one block their own offsets", () => {
    const output = `<｜tool▁calls▁begin｜>${DS_BASH}\n${DS_BASH}<｜tool▁calls▁end｜>`;
    const offsets = expectChunkingInvariant(deepseek, false, output).map((e) =>
      e.type === "tool_call" ? e.offset : -1,
    );
    expect(offsets).toEqual([output.indexOf(DS_BASH), output.lastIndexOf(DS_BASH)]);
  });

  it("turns a malformed block into text", () => {
    const bad = `<｜tool▁calls▁begin｜>${DS_BASH.replace('{"command": "ls"}', "{oops")}<｜tool▁calls▁end｜>`;
    const output = `ok${bad} junk<｜tool▁calls▁begin｜>stray<｜tool▁calls▁end｜>`;
    expect(expectChunkingInvariant(deepseek, false, output)).toEqual([{ type: "text", text: output }]);
  });
});
