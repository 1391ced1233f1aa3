/**
 * Issue 33: Kimi K2 and MiniMax M2 render what their real chat templates render
 * (native/model/chat-templates/kimi-k2.jinja, minimax-m2.jinja, by @huggingface/jinja), byte for
 * byte over the template matrix, thinking on and off; where a template rewrites history, Frontier
 * keeps its exact transcript, and each such place is a test below. Kimi's calls carry the ID the
 * model sees (`functions.NAME:IDX`), never the client's routable ID.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { detectFamily } from "../../../gpu-worker/chat/detect-family.ts";
import { KimiK2Format } from "../../../gpu-worker/chat/families/kimi/kimi-k2.ts";
import { MiniMaxM2Format } from "../../../gpu-worker/chat/families/minimax/minimax-m2.ts";
import { Role, ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { assistant, conversation, systemMessage, text, thinking, toolResult, toolUse, user } from "./fixtures.ts";
import { asLlamaCppMiniMax, kimiStyle } from "./kimi-minimax-style.ts";
import { matrix } from "./template-matrix.ts";
import { renderTemplate } from "./template-render.ts";

const kimi = new KimiK2Format();
const minimax = new MiniMaxM2Format();

describe("kimi-k2: Frontier renders what the template renders", () => {
  it.each(matrix())("$name", ({ conversation: c }) => {
    expect(kimi.render(c).text).toBe(renderTemplate("kimi-k2", c, kimiStyle(c)));
  });

  it("calls and results carry functions.NAME:IDX, counted across the conversation; client IDs never reach the prompt", () => {
    const c = conversation([
      user(text("Look.")),
      assistant(toolUse("toolu_a", "Bash", '{"command": "ls"}')),
      user(toolResult("toolu_a", "x")),
      assistant(toolUse("toolu_b", "Read", '{"path": "x"}'), toolUse("toolu_c", "Bash", '{"command": "pwd"}')),
      user(toolResult("toolu_c", "/"), toolResult("toolu_b", "y")),
    ]);
    const out = kimi.render(c).text;
    expect(out).not.toContain("toolu_");
    expect(out).toContain("<|tool_call_begin|>functions.Bash:0<|tool_call_argument_begin|>");
    expect(out).toContain("<|tool_call_begin|>functions.Read:1<|tool_call_argument_begin|>");
    expect(out).toContain("<|tool_call_begin|>functions.Bash:2<|tool_call_argument_begin|>");
    expect(out).toContain(
      "## Return of functions.Bash:2\n/<|im_end|><|im_system|>tool<|im_middle|>## Return of functions.Read:1\ny",
    );
    expect(out).toBe(renderTemplate("kimi-k2", c, kimiStyle(c)));
  });

  it("a remembered turn's sampled IDs win, in its calls and in the results that name them", () => {
    const c = conversation([
      user(text("Look.")),
      assistant(toolUse("toolu_a", "Bash", '{"command": "ls"}')),
      user(toolResult("toolu_a", "x")),
    ]);
    const raw =
      '<think></think><|tool_calls_section_begin|><|tool_call_begin|>functions.Bash:7<|tool_call_argument_begin|>{"command":"ls"}<|tool_call_end|><|tool_calls_section_end|>';
    const out = kimi.render(c, { rawAssistantTurn: (m) => (m.role === Role.ASSISTANT ? raw : undefined) }).text;
    expect(out).toContain(`<|im_assistant|>assistant<|im_middle|>${raw}<|im_end|>`);
    expect(out).toContain("## Return of functions.Bash:7\nx<|im_end|>");
    // The next render without memory falls back to the derived ID again (no state leaks across renders).
    expect(kimi.render(c).text).toContain("## Return of functions.Bash:0\n");
  });

  it("a client's own functions.NAME:IDX ID (a history from another Kimi server) is kept verbatim", () => {
    const c = conversation([
      user(text("Look.")),
      assistant(toolUse("functions.Bash:4", "Bash", '{"command": "ls"}')),
      user(toolResult("functions.Bash:4", "x")),
    ]);
    expect(kimi.render(c).text).toContain("## Return of functions.Bash:4\nx");
  });

  it("the template drops the reasoning of turns up to the last answer; Frontier keeps it", () => {
    const c = conversation([
      user(text("Hi.")),
      assistant(thinking("Greet back."), text("Hello!")),
      user(text("A joke?")),
    ]);
    const theirs = renderTemplate("kimi-k2", c, kimiStyle(c));
    expect(theirs).toContain("<think></think>Hello!");
    expect(kimi.render(c).text.replace("<think>Greet back.</think>", "<think></think>")).toBe(theirs);
  });

  it("a leading system message stands in for the default system prompt, as in the template", () => {
    const c = conversation([systemMessage("Only this."), user(text("Hi."))], { system: [], tools: false });
    expect(kimi.render(c).text).toBe(renderTemplate("kimi-k2", c));
    expect(kimi.render(c).text).not.toContain("You are Kimi");
  });
});

describe("minimax-m2: Frontier renders what the template renders (llama.cpp's copy: one newline named)", () => {
  it.each(matrix())("$name", ({ conversation: c }) => {
    expect(asLlamaCppMiniMax(minimax.render(c).text)).toBe(renderTemplate("minimax-m2", c));
  });

  it("a call turn ends `</minimax:tool_call>[e~[` as MiniMax's own template writes it (llama.cpp's copy adds a newline)", () => {
    const c = matrix().find((m) => m.name === "one call, its result, thinking on")?.conversation;
    if (c === undefined) throw new Error("missing case");
    const ours = minimax.render(c).text;
    expect(ours).toContain("</invoke>\n</minimax:tool_call>[e~[\n]~b]tool\n<response>");
    expect(renderTemplate("minimax-m2", c)).toContain("</invoke>\n</minimax:tool_call>\n[e~[\n]~b]tool");
  });

  it("interleaved thinking stays in the history between tool calls, as the template keeps it", () => {
    const c = conversation([
      user(text("Look.")),
      assistant(thinking("First ls."), toolUse("toolu_a", "Bash", '{"command": "ls"}')),
      user(toolResult("toolu_a", "x")),
      assistant(thinking("Now read x."), toolUse("toolu_b", "Read", '{"path": "x"}')),
      user(toolResult("toolu_b", "y")),
    ]);
    const out = minimax.render(c).text;
    expect(out).toContain("<think>\nFirst ls.\n</think>\n\n");
    expect(out).toContain("<think>\nNow read x.\n</think>\n\n");
    expect(asLlamaCppMiniMax(out)).toBe(renderTemplate("minimax-m2", c));
  });

  it("the template drops the reasoning of turns before the last user message; Frontier keeps it", () => {
    const c = conversation([
      user(text("Hi.")),
      assistant(thinking("Greet back."), text("Hello!")),
      user(text("A joke?")),
    ]);
    const theirs = renderTemplate("minimax-m2", c);
    expect(theirs).not.toContain("Greet back.");
    expect(asLlamaCppMiniMax(minimax.render(c).text).replace("<think>\nGreet back.\n</think>\n\n", "")).toBe(theirs);
  });

  it("every generation opens thinking, thinking on or off, as the template prefills it", () => {
    for (const mode of [ThinkingMode.ENABLED, ThinkingMode.DISABLED]) {
      const r = minimax.render(conversation([user(text("Hi."))], { thinking: mode }));
      expect(r.text.endsWith("]~b]ai\n<think>\n")).toBe(true);
      expect(r.thinkingOpen).toBe(true);
    }
  });
});

describe("detection from the GGUF's metadata", () => {
  const template = (name: string) =>
    readFileSync(new URL(`../../../native/model/chat-templates/${name}.jinja`, import.meta.url), "utf8");

  it("each real template matches its own rule, before any ChatML-like rule", () => {
    expect(detectFamily({ chatTemplate: template("kimi-k2") })).toEqual({
      family: "kimi-k2",
      rule: 'template: "<|im_assistant|>" + "<|im_middle|>"',
    });
    expect(detectFamily({ chatTemplate: template("minimax-m2") })).toEqual({
      family: "minimax-m2",
      rule: 'template: "]~b]" + "]~!b["',
    });
  });

  it("without a template: a control token only the family has, then its pre-tokenizer", () => {
    expect(detectFamily({ chatTemplate: undefined, specialTokens: ["<|im_user|>", "<|im_middle|>"] }).rule).toBe(
      'no template; control token "<|im_middle|>"',
    );
    expect(detectFamily({ chatTemplate: undefined, specialTokens: ["]~!b[", "]~b]"] }).family).toBe("minimax-m2");
    expect(detectFamily({ chatTemplate: undefined, tokenizerPre: "kimi-k2" }).family).toBe("kimi-k2");
    expect(detectFamily({ chatTemplate: undefined, tokenizerPre: "minimax-m2" }).rule).toBe(
      'no template; pre-tokenizer "minimax-m2"',
    );
  });
});
