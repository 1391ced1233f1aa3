/**
 * Byte equality with the models' own chat templates (native/model/chat-templates/, rendered by
 * @huggingface/jinja): every family over the same matrix of conversations. Where a template
 * rewrites history, Frontier keeps the transcript the model sampled (the KV holds it); each such
 * place is a test below that says what the template does instead.
 */
import { clone } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DeepSeekV31Format } from "../../../gpu-worker/chat/families/deepseek/deepseek-v31.ts";
import { GlmFormat } from "../../../gpu-worker/chat/families/glm/glm.ts";
import { HarmonyFormat } from "../../../gpu-worker/chat/families/harmony/harmony.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3Format } from "../../../gpu-worker/chat/families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import type { ChatFormat } from "../../../gpu-worker/chat/types.ts";
import {
  type Conversation,
  ConversationSchema,
  ThinkingMode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, text, thinking, toolResult, toolUse, user } from "./fixtures.ts";
import { matrix } from "./template-matrix.ts";
import { renderTemplate, type TemplateName, type TemplateStyle, templateToday } from "./template-render.ts";

const harmony = new HarmonyFormat({ currentDate: templateToday() });
const v31 = new DeepSeekV31Format();

/** V3.1's template has no tools: the model card puts them in the system prompt, as Frontier does. */
const v31Style = (c: Conversation): TemplateStyle => ({
  argumentsAsString: true,
  systemOverride: (v31.render(c).text.split("<｜User｜>")[0] ?? "").replace("<｜begin▁of▁sentence｜>", ""),
});

/** Strip thinking from the history: the shapes where templates keep nothing to compare. */
function withoutThinking(c: Conversation): Conversation {
  const copy = clone(ConversationSchema, c);
  for (const m of copy.messages) m.content = m.content.filter((b) => b.block.case !== "thinking");
  return copy;
}

const families: {
  template: TemplateName;
  format: ChatFormat;
  style?: (c: Conversation) => TemplateStyle;
  sameTool?: boolean;
  keepsThinking: boolean;
}[] = [
  { template: "qwen3", format: new Qwen3Format(), keepsThinking: true },
  { template: "qwen3-coder", format: new Qwen3CoderFormat(), keepsThinking: true },
  { template: "glm", format: new GlmFormat(), keepsThinking: true },
  // gpt-oss's template names every tool result after the latest call: equal when the calls share a tool.
  {
    template: "gpt-oss",
    format: harmony,
    style: () => ({ oneCallPerMessage: true, reasoningField: "thinking" }),
    sameTool: true,
    keepsThinking: true,
  },
  // V3.1's template never renders earlier reasoning (see below).
  { template: "deepseek-v3.1", format: v31, style: v31Style, keepsThinking: false },
];

describe.each(families)("$template: Frontier renders what the template renders", (family) => {
  it.each(matrix({ sameToolParallel: family.sameTool }))("$name", ({ conversation: c }) => {
    const subject = family.keepsThinking ? c : withoutThinking(c);
    expect(family.format.render(subject).text).toBe(renderTemplate(family.template, subject, family.style?.(subject)));
  });
});

/**
 * GLM-4.5's template as llama.cpp keeps it (models/templates/glm_4_5.jinja), which llama.cpp edited
 * (`tojson` without `ensure_ascii`, a string-arguments fallback, tighter whitespace control). On this
 * matrix the edit makes exactly two differences, both newlines GLM's own template writes (GLM-4.6's,
 * compared above, and GLM-4.5's on the Hub) and Frontier keeps: after `<|user|>`, and before each
 * `<arg_key>` and the closing `</tool_call>` of a call.
 */
function asLlamaCppGlm45(text: string): string {
  // The tools section (its format description spells a call too) is the same in both.
  const toolsEnd = text.indexOf("...\n</tool_call>");
  const head = toolsEnd < 0 ? "" : text.slice(0, toolsEnd);
  return (
    head +
    text
      .slice(head.length)
      .replaceAll("<|user|>\n", "<|user|>")
      .replaceAll("\n<arg_key>", "<arg_key>")
      .replaceAll("</arg_value>\n</tool_call>", "</arg_value></tool_call>")
  );
}

describe("glm-4.5: Frontier renders what llama.cpp's copy of the template renders, but for its newline edits", () => {
  const glm = new GlmFormat();
  it.each(matrix())("$name", ({ conversation: c }) => {
    const ours = glm.render(c).text;
    expect(ours).toContain("<|user|>\n");
    expect(asLlamaCppGlm45(ours)).toBe(renderTemplate("glm-4.5", c));
  });
});

/** A finished turn (with reasoning) and a new question: where templates drop the old reasoning. */
const afterEndTurn = (mode = ThinkingMode.ENABLED) =>
  conversation([user(text("Hi.")), assistant(thinking("Greet back."), text("Hello!")), user(text("A joke?"))], {
    thinking: mode,
  });

describe("where a template rewrites history, Frontier keeps its exact transcript", () => {
  it("qwen3 drops the reasoning of turns before the last user query; Frontier keeps it", () => {
    const c = afterEndTurn();
    const ours = new Qwen3Format().render(c).text;
    const theirs = renderTemplate("qwen3", c);
    expect(theirs).not.toContain("Greet back.");
    expect(ours.replace("<think>\nGreet back.\n</think>\n\n", "")).toBe(theirs);
  });

  it("glm renders an empty think block for turns before the last user message; Frontier keeps it", () => {
    const c = afterEndTurn();
    const ours = new GlmFormat().render(c).text;
    const theirs = renderTemplate("glm", c);
    expect(ours.replace("<think>Greet back.</think>", "<think></think>")).toBe(theirs);
  });

  it("gpt-oss drops analysis once a final answer follows; Frontier keeps it", () => {
    const c = conversation([
      user(text("List files.")),
      assistant(thinking("Run ls."), toolUse("toolu_1", "Bash", '{"command": "ls"}')),
      user(toolResult("toolu_1", "a.txt")),
      assistant(text("There is a.txt.")),
      user(text("Thanks.")),
    ]);
    const ours = harmony.render(c).text;
    const theirs = renderTemplate("gpt-oss", c, { oneCallPerMessage: true, reasoningField: "thinking" });
    expect(ours.replace("<|start|>assistant<|channel|>analysis<|message|>Run ls.<|end|>", "")).toBe(theirs);
  });

  it("gpt-oss names every result after the latest call; Frontier names each result's own tool", () => {
    const c = matrix().find((m) => m.name === "parallel calls, results in completion order, thinking on")?.conversation;
    if (c === undefined) throw new Error("missing case");
    const ours = harmony.render(c).text;
    const theirs = renderTemplate("gpt-oss", c, { oneCallPerMessage: true, reasoningField: "thinking" });
    expect(ours).toContain('<|start|>functions.Read to=assistant<|channel|>commentary<|message|>"second done"');
    expect(ours).toContain('<|start|>functions.Bash to=assistant<|channel|>commentary<|message|>"first done"');
    expect(ours.replace("functions.Bash to=assistant", "functions.Read to=assistant")).toBe(theirs);
  });

  it("deepseek-v3.1 renders every earlier turn as `</think>`; Frontier keeps the reasoning", () => {
    for (const { conversation: c } of matrix().filter((m) => m.name.startsWith("one call"))) {
      const ours = v31.render(c).text;
      const theirs = renderTemplate("deepseek-v3.1", c, v31Style(c));
      expect(ours.replace("<think>I should run ls.</think>", "</think>")).toBe(theirs);
    }
  });

  it("chatml is Qwen3's template with the opening <think> prefilled when thinking is on", () => {
    for (const { conversation: c } of matrix()) {
      const ours = new ChatMlFormat().render(c).text;
      const theirs = renderTemplate("qwen3", c);
      const on = c.thinking?.mode !== ThinkingMode.DISABLED;
      expect(ours).toBe(on ? `${theirs}<think>\n` : theirs);
    }
  });
});
