/**
 * The one shape each broken call ends in, for every family:
 * - cut before its tool name is complete, or naming a tool the request does not have: dropped —
 *   no call, no text, no markup;
 * - cut by the end of generation after it started: `truncated`, its arguments closed where they
 *   stopped (nothing invented after the last complete value);
 * - its markup or arguments broke: `malformed`, closed the same way; the rest of the span dropped;
 * - well-formed but failing the tool's schema: delivered as the complete call it is (the client's
 *   tool validation answers the model, as with any API).
 * A started call always ends, and its argument deltas always concatenate to a JSON object.
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
import { expectCallInvariants, parse, parseChunks } from "./parser-check.ts";

interface Family {
  format: ChatFormat;
  /** A Bash call's text up to its arguments, then the arguments, then the rest of its markup. */
  open: (name: string) => string;
  close: string;
  /** How the arguments `{"command": "echo hi"}` are written. */
  args: (command: string) => string;
}

const json = (c: string) => `{"command": "${c}"}`;
const families: Family[] = [
  {
    format: new ChatMlFormat(),
    open: (n) => `<tool_call>\n{"name": "${n}", "arguments": `,
    close: "}\n</tool_call>",
    args: json,
  },
  {
    format: new Qwen3Format(),
    open: (n) => `<tool_call>\n{"name": "${n}", "arguments": `,
    close: "}\n</tool_call>",
    args: json,
  },
  {
    format: new Qwen3CoderFormat(),
    open: (n) => `<tool_call>\n<function=${n}>\n`,
    close: "</function>\n</tool_call>",
    args: (c) => `<parameter=command>\n${c}\n</parameter>\n`,
  },
  {
    format: new GlmFormat(),
    open: (n) => `<tool_call>${n}`,
    close: "\n</tool_call>",
    args: (c) => `\n<arg_key>command</arg_key>\n<arg_value>${c}</arg_value>`,
  },
  {
    format: new HarmonyFormat(),
    open: (n) => ` to=functions.${n}<|channel|>commentary json<|message|>`,
    close: "",
    args: json,
  },
  {
    format: new DeepSeekFormat(),
    open: (n) => `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>${n}\n\`\`\`json\n`,
    close: "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    args: json,
  },
  {
    format: new DeepSeekV31Format(),
    open: (n) => `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>${n}<｜tool▁sep｜>`,
    close: "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    args: json,
  },
];

const options = { thinkingOpen: false, tools: TOOLS };
const textOf = (events: OutputEvent[]) => events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
const ends = (events: OutputEvent[]) => events.filter((e) => e.type === "tool_call_end");

describe.each(families)("$format.name", (f) => {
  const full = `${f.open("Bash")}${f.args("echo hi")}${f.close}`;

  it("a complete call is complete", () => {
    const events = parse(f.format, options, [full]);
    expect(ends(events).map((e) => [e.name, JSON.parse(e.argumentsJson), e.status])).toEqual([
      ["Bash", { command: "echo hi" }, "complete"],
    ]);
  });

  it("cut by max_tokens at any point: no markup shown, any started call closed as truncated", () => {
    for (let cut = 1; cut < full.length; cut++) {
      const output = full.slice(0, cut);
      const events = parseChunks(f.format, options, output.split(""));
      expectCallInvariants(output, events);
      expect(textOf(events), output).toBe("");
      for (const e of ends(events)) {
        expect(["truncated", "complete"]).toContain(e.status);
        // Nothing invented: the closed arguments hold at most what was sampled.
        const command = (JSON.parse(e.argumentsJson) as { command?: string }).command;
        if (command !== undefined) expect("echo hi".startsWith(command)).toBe(true);
      }
    }
  });

  it("a call naming an unknown tool is dropped, the text around it kept", () => {
    const output = `Before.\n${f.open("Nope")}${f.args("rm -rf /")}${f.close}`;
    const events = parse(f.format, options, [output]);
    expect(events.filter((e) => e.type.startsWith("tool_call"))).toEqual([]);
    if (f.format.name !== "harmony") expect(textOf(events)).toBe("Before.");
  });
});

describe.each(families.filter((f) => f.args === json))("$format.name: broken JSON arguments", (f) => {
  it("ends the call as malformed, closed after its last complete value", () => {
    const output = `${f.open("Bash")}{"command": "ls", "timeout": oops}${f.close}`;
    const events = parse(f.format, options, [output]);
    expectCallInvariants(output, events);
    expect(ends(events).map((e) => [e.status, JSON.parse(e.argumentsJson)])).toEqual([
      ["malformed", { command: "ls" }],
    ]);
    expect(textOf(events)).toBe("");
  });
});

describe.each(families)("$format.name: arguments that fail the tool's schema", (f) => {
  it("are delivered as the complete call they are: the client's tool validation answers the model", () => {
    // Bash requires `command`; the model sent only `timeout`. Frontier does not rewrite or withhold
    // a well-formed call: the client rejects it in a tool_result, as with any API.
    const args =
      f.args === json
        ? '{"timeout": 5}'
        : f
            .args("x")
            .replace(/command/g, "timeout")
            .replace(/\bx\b/, "5");
    const output = `${f.open("Bash")}${args}${f.close}`;
    const events = parse(f.format, options, [output]);
    expectCallInvariants(output, events);
    expect(ends(events).map((e) => [e.name, JSON.parse(e.argumentsJson), e.status])).toEqual([
      ["Bash", { timeout: 5 }, "complete"],
    ]);
  });
});
