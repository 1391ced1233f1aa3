/**
 * Picks the chat format for a model: configured by name (`FRONTIER_CHAT_FORMAT`), or recognised
 * from the GGUF's chat template and architecture. A template that matches no known family is a
 * startup error: serving a prompt the model was not trained on would be silent garbage.
 */
import { ChatMlFormat } from "./families/chatml.ts";
import { DeepSeekFormat } from "./families/deepseek.ts";
import { DeepSeekV31Format } from "./families/deepseek-v31.ts";
import { GlmFormat } from "./families/glm.ts";
import { HarmonyFormat, type HarmonyOptions } from "./families/harmony.ts";
import { Qwen3Format } from "./families/qwen3.ts";
import { Qwen3CoderFormat } from "./families/qwen3-coder.ts";
import { CHAT_FAMILIES, type ChatFamily, type ChatFormatName } from "./family-names.ts";
import type { ChatFormat } from "./types.ts";

export interface ModelTemplateInfo {
  chatTemplate: string | undefined;
  architecture?: string;
}

export class UnknownChatTemplateError extends Error {
  constructor(reason: string) {
    super(
      `${reason}: cannot tell the model's chat format. Supported families: ${CHAT_FAMILIES.join(", ")}. ` +
        "Set FRONTIER_CHAT_FORMAT to the one this model was trained on.",
    );
    this.name = "UnknownChatTemplateError";
  }
}

/** The family a chat template (and architecture) belongs to. */
export function detectChatFamily(model: ModelTemplateInfo): ChatFamily {
  const t = model.chatTemplate;
  const arch = model.architecture ?? "";
  if (arch === "gpt-oss" || (t?.includes("<|start|>") && t.includes("<|channel|>"))) return "harmony";
  if (t === undefined || t.trim() === "") throw new UnknownChatTemplateError("The GGUF has no chat template");
  if (t.includes("<｜User｜>")) return t.includes("```json") || t.includes("DSML") ? "deepseek" : "deepseek-v3.1";
  if (t.includes("[gMASK]") || t.includes("<|observation|>")) return "glm";
  if (t.includes("<|im_start|>")) {
    if (t.includes("<function=") && t.includes("<parameter=")) return "qwen3-coder";
    if (t.includes("<think>") || t.includes("enable_thinking")) return "qwen3";
    return "chatml";
  }
  throw new UnknownChatTemplateError("The GGUF's chat template matches no supported family");
}

export function createChatFormat(
  family: ChatFamily,
  model: ModelTemplateInfo,
  harmony: Partial<HarmonyOptions> = {},
): ChatFormat {
  switch (family) {
    case "chatml":
      return new ChatMlFormat();
    case "qwen3":
      return new Qwen3Format();
    case "qwen3-coder":
      return new Qwen3CoderFormat({ thinking: model.chatTemplate?.includes("<think>") ?? false });
    case "harmony":
      return new HarmonyFormat(harmony);
    case "glm":
      return new GlmFormat();
    case "deepseek":
      return new DeepSeekFormat();
    case "deepseek-v3.1":
      return new DeepSeekV31Format();
    default: {
      const never: never = family;
      throw new RangeError(`unknown chat format: ${String(never)}`);
    }
  }
}

/** `auto`: detected from the template (throws `UnknownChatTemplateError`); otherwise the named family. */
export function selectChatFormat(
  name: ChatFormatName,
  model: ModelTemplateInfo,
  harmony: Partial<HarmonyOptions> = {},
): ChatFormat {
  return createChatFormat(name === "auto" ? detectChatFamily(model) : name, model, harmony);
}
