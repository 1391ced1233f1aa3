/**
 * Issue 33: the newer templates of supported families, each its own family where its bytes differ
 * (`qwen3.5` over `qwen3-coder`, `glm-4.7` over `glm`), byte for byte equal to the real template
 * (native/model/chat-templates/qwen3.5.jinja, glm-4.7.jinja) over the same matrix as every family;
 * where the template rewrites history, Frontier's exact transcript is a named difference. llama.cpp's
 * current Qwen3-Coder template (its own edit) is compared too, but for its named tools preamble.
 * Qwen3.6, Qwen3-Coder-Next and GLM-5 are not here: no vendor or llama.cpp copy of their templates
 * was found (native/model/chat-templates/README.md says where it was looked for).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectFamily } from "../../../gpu-worker/chat/detect-family.ts";
import { GlmFormat } from "../../../gpu-worker/chat/families/glm/glm.ts";
import { Glm47Format } from "../../../gpu-worker/chat/families/glm/glm47.ts";
import { CODER_TOOLS_OUTRO, Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import { Qwen35Format } from "../../../gpu-worker/chat/families/qwen/qwen35.ts";
import type { ChatFormat, OutputEvent } from "../../../gpu-worker/chat/types.ts";
import { ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, TOOLS, text, thinking, toolResult, toolUse, user } from "./fixtures.ts";
import { gbnfMatches } from "./gbnf-check.ts";
import { matrix } from "./template-matrix.ts";
import { renderTemplate } from "./template-render.ts";

const qwen35 = new Qwen35Format();
const glm47 = new Glm47Format();

describe.each([
  { template: "qwen3.5", format: qwen35 },
  { template: "glm-4.7", format: glm47 },
] as const)("$template: Frontier renders what the template renders", ({ template, format }) => {
  it.each(matrix())("$name", ({ conversation: c }) => {
    expect(format.render(c).text).toBe(renderTemplate(template, c));
  });
});

/** A finished turn (with reasoning) and a new question: where both templates drop the old reasoning. */
const afterEndTurn = conversation(
  [user(text("Hi.")), assistant(thinking("Greet back."), text("Hello!")), user(text("A joke?"))],
  { thinking: ThinkingMode.ENABLED },
);

describe("qwen3.5", () => {
  it("trims client text, writes object and array arguments as JSON, and puts text after results in its own turn", () => {
    const c = conversation([
      user(text("  List files.\n")),
      // Before the last query (the text after the result): no think block.
      assistant(toolUse("toolu_1", "Read", '{"path": "a.txt", "opts": {"lines": [1, 2]}}')),
      user(toolResult("toolu_1", "\nline one\n"), text("Now summarise. ")),
    ]);
    const ours = qwen35.render(c).text;
    expect(ours).toContain('<parameter=opts>\n{"lines": [1, 2]}\n</parameter>');
    expect(ours).toContain(
      "<tool_response>\nline one\n</tool_response><|im_end|>\n<|im_start|>user\nNow summarise.<|im_end|>",
    );
    expect(ours).toBe(renderTemplate("qwen3.5", c));
  });

  it("writes an empty think block on turns after the last query, none before it", () => {
    const c = conversation([
      user(text("Hi.")),
      assistant(text("Hello!")),
      user(text("List files.")),
      assistant(toolUse("toolu_1", "Bash", '{"command": "ls"}')),
      user(toolResult("toolu_1", "a.txt")),
    ]);
    const ours = qwen35.render(c).text;
    expect(ours).toContain("<|im_start|>assistant\nHello!<|im_end|>");
    expect(ours).toContain("<|im_start|>assistant\n<think>\n\n</think>\n\n<tool_call>\n<function=Bash>");
    expect(ours).toBe(renderTemplate("qwen3.5", c));
  });

  it("drops the reasoning of turns before the last user query; Frontier keeps it", () => {
    const theirs = renderTemplate("qwen3.5", afterEndTurn);
    expect(theirs).not.toContain("Greet back.");
    expect(qwen35.render(afterEndTurn).text.replace("<think>\nGreet back.\n</think>\n\n", "")).toBe(theirs);
  });

  it("is not Qwen3-Coder's rendering: tools as JSON, no default system prompt, thinking-off prefill", () => {
    const c = conversation([user(text("List files."))], { system: [], thinking: ThinkingMode.DISABLED });
    const theirs = renderTemplate("qwen3.5", c);
    expect(theirs).toContain('<tools>\n{"type": "function", "function": {"name": "Bash"');
    expect(theirs.endsWith("<|im_start|>assistant\n<think>\n\n</think>\n\n")).toBe(true);
    expect(new Qwen3CoderFormat({ thinking: true }).render(c).text).not.toBe(theirs);
  });
});

describe("glm-4.7", () => {
  it("drops the reasoning of turns before the last user message unless clear_thinking is false; Frontier keeps it", () => {
    const ours = glm47.render(afterEndTurn).text;
    expect(ours).toContain("<|assistant|><think>Greet back.</think>Hello!<|user|>A joke?<|assistant|><think>");
    expect(ours.replace("<think>Greet back.</think>", "</think>")).toBe(renderTemplate("glm-4.7", afterEndTurn));
    expect(ours).toBe(renderTemplate("glm-4.7", afterEndTurn, {}, { clear_thinking: false }));
  });

  it("is not GLM-4.6's rendering: no newlines between pieces, no /nothink, thinking prefilled", () => {
    const c = matrix().find((m) => m.name === "one call, its result, thinking off")?.conversation;
    if (c === undefined) throw new Error("missing case");
    const theirs = renderTemplate("glm-4.7", c);
    expect(theirs).toContain("<tool_call>Bash<arg_key>command</arg_key><arg_value>ls</arg_value><arg_key>");
    expect(theirs).not.toContain("/nothink");
    expect(new GlmFormat().render(c).text).not.toBe(theirs);
  });
});

/**
 * llama.cpp's current `Qwen3-Coder.jinja` (native/model/chat-templates/qwen3-coder-llama.cpp.jinja):
 * Qwen's template as llama.cpp edited it (added so in its commit 1920345, reworded in 566059a); no
 * model is named as shipping it (Qwen3-Coder-Next's own template was not found). A GGUF carrying it
 * is `qwen3-coder`, and Frontier's rendering differs only in the tools preamble, named here.
 */
const LLAMA_CPP_CODER_OUTRO =
  "\n</tools>\n\nIf you choose to call a tool ONLY reply in the following format with NO suffix:\n\n" +
  "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n" +
  "<parameter=example_parameter_2>\nvalue_2\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n" +
  "- Function calls MUST follow the specified format: the tool calling block MUST begin with an opening <tool_call> tag and end with a closing </tool_call> tag.\n" +
  "- Required parameters MUST be specified\n" +
  "- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n" +
  "- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n" +
  "</IMPORTANT>";

/** Frontier's qwen3-coder prompt with llama.cpp's preamble: its heading, its JSON `required` lists, its call instructions. */
function asLlamaCppCoder(ours: string): string {
  return ours
    .replace(
      "\n\nYou have access to the following functions:\n\n",
      "\n\n# Tools\n\nYou have access to the following tools:\n\n",
    )
    .replaceAll(/<required>\[`(\w+)`\]<\/required>/g, '<required>["$1"]</required>')
    .replace(CODER_TOOLS_OUTRO, LLAMA_CPP_CODER_OUTRO);
}

describe("llama.cpp's current Qwen3-Coder template", () => {
  const source = readFileSync(
    new URL("../../../native/model/chat-templates/qwen3-coder-llama.cpp.jinja", import.meta.url),
    "utf8",
  );
  const coder = new Qwen3CoderFormat({ thinking: false });

  it("is detected as qwen3-coder, without thinking (it has no <think>, so not qwen3.5)", () => {
    expect(detectFamily({ chatTemplate: source })).toEqual({
      family: "qwen3-coder",
      rule: 'template: "<|im_start|>" + "<function=" + "<parameter="',
    });
    expect(source).not.toContain("<think>");
  });

  it.each(matrix())("$name: equal but for the tools preamble", ({ conversation: c }) => {
    const ours = coder.render(c).text;
    const theirs = renderTemplate("qwen3-coder-llama.cpp", c);
    expect(asLlamaCppCoder(ours)).toBe(theirs);
    // Everything after the system turn (turns, calls, results, the generation prompt) is byte-equal as is.
    const afterSystem = (t: string) => t.slice(t.indexOf(`<|im_end|>\n<|im_start|>user`));
    expect(afterSystem(ours)).toBe(afterSystem(theirs));
    expect(ours === theirs).toBe(c.tools.length === 0);
  });
});

const ends = (events: readonly OutputEvent[]) =>
  events.flatMap((e) => (e.type === "tool_call_end" ? [[e.name, JSON.parse(e.argumentsJson), e.status]] : []));

describe.each([
  { format: qwen35 as ChatFormat, sampled: "Run ls.\n</think>\n\n", call: "\n<tool_call>\n<function=Bash>\n" },
  { format: glm47 as ChatFormat, sampled: "Run ls.</think>", call: "<tool_call>Bash<arg_key>" },
])("$format.name: a past call's markup is what the model samples", ({ format, sampled, call }) => {
  const c = conversation([
    user(text("List files.")),
    assistant(thinking("Run ls."), toolUse("toolu_1", "Bash", '{"command": "ls", "timeout": 5}')),
    user(toolResult("toolu_1", "a.txt")),
  ]);
  const rendered = format.render(c).text;
  const start = rendered.indexOf(call.trimStart());
  const callText = rendered.slice(start, rendered.indexOf("</tool_call>", start) + "</tool_call>".length);

  it("parses back into the same call, reasoning first", () => {
    const parser = format.createOutputParser({ thinkingOpen: true, tools: TOOLS });
    const events = [...parser.push(sampled + callText), ...parser.finish()];
    expect(events.filter((e) => e.type === "thinking").map((e) => (e.type === "thinking" ? e.text : ""))).toEqual([
      "Run ls.",
    ]);
    expect(ends(events)).toEqual([["Bash", { command: "ls", timeout: 5 }, "complete"]]);
  });

  it("is exactly what a fixed-call grammar forces after closing an open thinking block", () => {
    const grammar = format.fixedToolCallsGrammar(
      [{ name: "Bash", argumentsJson: '{"command": "ls", "timeout": 5}' }],
      true,
    );
    const close = format.name === "glm-4.7" ? "</think>" : "\n</think>\n\n";
    expect(gbnfMatches(grammar, close + callText)).toBe(true);
    expect(gbnfMatches(grammar, `${close}${callText}x`)).toBe(false);
  });
});
