import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CHAT_FAMILIES } from "../../../gpu-worker/chat/family-names.ts";
import {
  detectChatFamily,
  selectChatFormat,
  UnknownChatTemplateError,
} from "../../../gpu-worker/chat/select-format.ts";
import { ThinkingMode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { conversation, text, user } from "./fixtures.ts";

const fixture = (name: string) =>
  readFileSync(new URL(`../../../native/model/chat-templates/${name}.jinja`, import.meta.url), "utf8");

/** The template the generator writes into the byte-level test models (plain ChatML). */
const TEST_MODEL_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

describe("selectChatFormat", () => {
  it("forces any family by name (FRONTIER_CHAT_FORMAT), whatever the template", () => {
    for (const family of CHAT_FAMILIES)
      expect(selectChatFormat(family, { chatTemplate: "<｜User｜>" }).name).toBe(family);
  });

  it("recognises each family's real chat template", () => {
    expect(detectChatFamily({ chatTemplate: fixture("qwen3") })).toBe("qwen3");
    expect(detectChatFamily({ chatTemplate: fixture("qwen3-coder") })).toBe("qwen3-coder");
    expect(detectChatFamily({ chatTemplate: fixture("gpt-oss") })).toBe("harmony");
    expect(detectChatFamily({ chatTemplate: fixture("glm") })).toBe("glm");
    expect(detectChatFamily({ chatTemplate: fixture("deepseek-v3.1") })).toBe("deepseek-v3.1");
  });

  it("keeps serving the generated test models (plain ChatML) and DeepSeek's ```json style", () => {
    expect(detectChatFamily({ chatTemplate: TEST_MODEL_TEMPLATE })).toBe("chatml");
    expect(detectChatFamily({ chatTemplate: "{{'<｜User｜>' + c}}{{'\\n```json\\n'}}" })).toBe("deepseek");
  });

  it("uses the architecture where it decides (gpt-oss), and offers thinking to Qwen3.5-style coders only", () => {
    expect(detectChatFamily({ chatTemplate: undefined, architecture: "gpt-oss" })).toBe("harmony");
    const coder = selectChatFormat("auto", { chatTemplate: fixture("qwen3-coder") });
    expect(coder.render(conversationThinking()).thinkingOpen).toBe(false);
    const coder35 = selectChatFormat("auto", { chatTemplate: `${fixture("qwen3-coder")}{{ '<think>\\n' }}` });
    expect(coder35.render(conversationThinking()).thinkingOpen).toBe(true);
  });

  it("refuses an unknown or missing template, naming the families and the setting", () => {
    for (const chatTemplate of ["{{ messages }}", undefined, ""]) {
      expect(() => selectChatFormat("auto", { chatTemplate })).toThrow(UnknownChatTemplateError);
    }
    expect(() => selectChatFormat("auto", { chatTemplate: "{{ messages }}" })).toThrow(
      /Supported families: chatml, qwen3, qwen3-coder, harmony, glm, deepseek, deepseek-v3\.1\. Set FRONTIER_CHAT_FORMAT/,
    );
    expect(selectChatFormat("glm", { chatTemplate: "{{ messages }}" }).name).toBe("glm");
  });

  it("reports each format's end-of-generation texts", () => {
    const eog = (family: (typeof CHAT_FAMILIES)[number]) =>
      selectChatFormat(family, { chatTemplate: undefined }).endOfGenerationTexts;
    expect(eog("chatml")).toEqual(["<|im_end|>", "<|endoftext|>"]);
    expect(eog("harmony")).toEqual(["<|return|>", "<|call|>"]);
    expect(eog("glm")).toEqual(["<|user|>", "<|observation|>", "<|endoftext|>"]);
    expect(eog("deepseek-v3.1")).toEqual(["<｜end▁of▁sentence｜>"]);
  });
});

function conversationThinking() {
  return conversation([user(text("hi"))], { thinking: ThinkingMode.ENABLED });
}
