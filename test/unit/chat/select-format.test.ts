import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  detectFamily,
  type ModelTemplateInfo,
  UnknownChatTemplateError,
} from "../../../gpu-worker/chat/detect-family.ts";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import { selectChatFormat } from "../../../gpu-worker/chat/select-format.ts";
import { ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { conversation, text, user } from "./fixtures.ts";

const detectChatFamily = (model: ModelTemplateInfo) => detectFamily(model).family;
const fixture = (name: string) =>
  readFileSync(new URL(`../../../native/model/chat-templates/${name}.jinja`, import.meta.url), "utf8");

/** The template the generator writes into the byte-level test models (plain ChatML). */
const TEST_MODEL_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

describe("selectChatFormat", () => {
  it("forces any family by name (FRONTIER_CHAT_FORMAT), whatever the template", () => {
    for (const family of CHAT_FAMILIES)
      expect(selectChatFormat(family, { chatTemplate: "<｜User｜>" }).format.name).toBe(family);
  });

  it("recognises each family's real chat template", () => {
    expect(detectChatFamily({ chatTemplate: fixture("qwen3") })).toBe("qwen3");
    expect(detectChatFamily({ chatTemplate: fixture("qwen3-coder") })).toBe("qwen3-coder");
    expect(detectChatFamily({ chatTemplate: fixture("gpt-oss") })).toBe("harmony");
    expect(detectChatFamily({ chatTemplate: fixture("glm") })).toBe("glm");
    expect(detectChatFamily({ chatTemplate: fixture("deepseek-v3.1") })).toBe("deepseek-v3.1");
    expect(detectChatFamily({ chatTemplate: fixture("qwen3.5") })).toBe("qwen3.5");
    expect(detectChatFamily({ chatTemplate: fixture("glm-4.7") })).toBe("glm-4.7");
    expect(detectChatFamily({ chatTemplate: fixture("glm-4.5") })).toBe("glm");
  });

  it("keeps serving the generated test models (plain ChatML) and DeepSeek's ```json style", () => {
    expect(detectChatFamily({ chatTemplate: TEST_MODEL_TEMPLATE })).toBe("chatml");
    expect(detectChatFamily({ chatTemplate: "{{'<｜User｜>' + c}}{{'\\n```json\\n'}}" })).toBe("deepseek");
  });

  it("uses the architecture where it decides (gpt-oss), and offers thinking to coders whose template reasons", () => {
    expect(detectChatFamily({ chatTemplate: undefined, architecture: "gpt-oss" })).toBe("harmony");
    const coder = selectChatFormat("auto", { chatTemplate: fixture("qwen3-coder") }).format;
    expect(coder.render(conversationThinking()).thinkingOpen).toBe(false);
    const coder35 = selectChatFormat("auto", { chatTemplate: `${fixture("qwen3-coder")}{{ '<think>\\n' }}` }).format;
    expect(coder35.render(conversationThinking()).thinkingOpen).toBe(true);
  });

  it("refuses an unknown or missing template, naming the families and the setting", () => {
    for (const chatTemplate of ["{{ messages }}", undefined, ""]) {
      expect(() => selectChatFormat("auto", { chatTemplate })).toThrow(UnknownChatTemplateError);
    }
    expect(() => selectChatFormat("auto", { chatTemplate: "{{ messages }}" })).toThrow(
      /Supported families: chatml, qwen3, qwen3-coder, qwen3\.5, harmony, glm, glm-4\.7, deepseek, deepseek-v3\.1, kimi-k2, minimax-m2\. Set FRONTIER_CHAT_FORMAT/,
    );
    expect(selectChatFormat("glm", { chatTemplate: "{{ messages }}" }).format.name).toBe("glm");
  });

  it("reports each format's end-of-generation texts", () => {
    const eog = (family: (typeof CHAT_FAMILIES)[number]) =>
      selectChatFormat(family, { chatTemplate: undefined }).format.endOfGenerationTexts;
    expect(eog("chatml")).toEqual(["<|im_end|>", "<|endoftext|>"]);
    expect(eog("harmony")).toEqual(["<|return|>", "<|call|>"]);
    expect(eog("glm")).toEqual(["<|user|>", "<|observation|>", "<|endoftext|>"]);
    expect(eog("deepseek-v3.1")).toEqual(["<｜end▁of▁sentence｜>"]);
  });
});

describe("detectFamily", () => {
  it("names the rule that matched: the template's markers first", () => {
    expect(detectFamily({ chatTemplate: fixture("qwen3-coder") })).toEqual({
      family: "qwen3-coder",
      rule: 'template: "<|im_start|>" + "<function=" + "<parameter="',
    });
    expect(detectFamily({ chatTemplate: fixture("glm") }).rule).toBe('template: "[gMASK]"');
    expect(detectFamily({ chatTemplate: fixture("glm-4.7") }).rule).toBe(
      'template: "[gMASK]" + "</arg_key><arg_value>"',
    );
    expect(detectFamily({ chatTemplate: fixture("qwen3.5") }).rule).toBe(
      'template: "<|im_start|>" + "<function=" + "<parameter=" + "<think>" + "enable_thinking" + "tojson"',
    );
    expect(detectFamily({ chatTemplate: undefined, architecture: "gpt-oss" }).rule).toBe('architecture "gpt-oss"');
    expect(selectChatFormat("glm", { chatTemplate: undefined }).rule).toBe("FRONTIER_CHAT_FORMAT=glm");
  });

  it("with no template, falls back to family-only control tokens, then a pre-tokenizer that decides alone", () => {
    expect(detectFamily({ chatTemplate: undefined, specialTokens: ["<|start|>", "<|channel|>"] })).toEqual({
      family: "harmony",
      rule: 'no template; control token "<|channel|>"',
    });
    expect(detectFamily({ chatTemplate: "", specialTokens: ["[gMASK]", "<|observation|>"] }).family).toBe("glm");
    expect(detectFamily({ chatTemplate: undefined, tokenizerPre: "glm4" }).rule).toBe(
      'no template; pre-tokenizer "glm4"',
    );
    // qwen2's pre-tokenizer and ChatML tokens are shared by qwen3, qwen3-coder and plain ChatML: never guessed.
    expect(() =>
      detectFamily({ chatTemplate: undefined, tokenizerPre: "qwen2", specialTokens: ["<|im_start|>"] }),
    ).toThrow(/no chat template \(architecture "unknown"; pre-tokenizer "qwen2"; control tokens "<\|im_start\|>"…\)/);
  });

  it("an unknown template is an error naming what was found, never a fallback to the vocabulary", () => {
    const info = {
      chatTemplate: "{% for m in messages %}[INST]{{ m.content }}[/INST]{% endfor %}",
      architecture: "llama",
      tokenizerPre: "llama-bpe",
      specialTokens: ["<|channel|>"],
    };
    expect(() => detectFamily(info)).toThrow(UnknownChatTemplateError);
    expect(() => detectFamily(info)).toThrow(/template starts "\{% for m in messages %\}\[INST\]/);
    expect(() => detectFamily(info)).toThrow(
      /architecture "llama"; pre-tokenizer "llama-bpe".*Set FRONTIER_CHAT_FORMAT/,
    );
  });
});

function conversationThinking() {
  return conversation([user(text("hi"))], { thinking: ThinkingMode.ENABLED });
}
