/**
 * Picks the chat format for a model: configured by name (`FRONTIER_CHAT_FORMAT`), or recognised
 * from the GGUF's metadata (detect-family.ts). A template that matches no known family is a
 * startup error: serving a prompt the model was not trained on would be silent garbage.
 */
import { detectFamily, type ModelTemplateInfo } from "./detect-family.ts";
import { DeepSeekFormat } from "./families/deepseek/deepseek.ts";
import { DeepSeekV31Format } from "./families/deepseek/deepseek-v31.ts";
import { GlmFormat } from "./families/glm/glm.ts";
import { Glm47Format } from "./families/glm/glm47.ts";
import { HarmonyFormat, type HarmonyOptions } from "./families/harmony/harmony.ts";
import { KimiK2Format } from "./families/kimi/kimi-k2.ts";
import { MiniMaxM2Format } from "./families/minimax/minimax-m2.ts";
import { ChatMlFormat } from "./families/qwen/chatml.ts";
import { Qwen3Format } from "./families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "./families/qwen/qwen3-coder.ts";
import { Qwen35Format } from "./families/qwen/qwen35.ts";
import type { ChatFamily, ChatFormatName } from "./family-names.ts";
import type { ChatFormat } from "./types.ts";

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
    case "qwen3.5":
      return new Qwen35Format();
    case "harmony":
      return new HarmonyFormat(harmony);
    case "glm":
      return new GlmFormat();
    case "glm-4.7":
      return new Glm47Format();
    case "deepseek":
      return new DeepSeekFormat();
    case "deepseek-v3.1":
      return new DeepSeekV31Format();
    case "kimi-k2":
      return new KimiK2Format();
    case "minimax-m2":
      return new MiniMaxM2Format();
    default: {
      const never: never = family;
      throw new RangeError(`unknown chat format: ${String(never)}`);
    }
  }
}

/** The chosen format and why: the detection rule that matched, or the setting that named it. */
export interface SelectedFormat {
  format: ChatFormat;
  rule: string;
}

/** `auto`: detected from the GGUF (throws `UnknownChatTemplateError`); otherwise the named family. */
export function selectChatFormat(
  name: ChatFormatName,
  model: ModelTemplateInfo,
  harmony: Partial<HarmonyOptions> = {},
): SelectedFormat {
  const { family, rule } =
    name === "auto" ? detectFamily(model) : { family: name, rule: `FRONTIER_CHAT_FORMAT=${name}` };
  return { format: createChatFormat(family, model, harmony), rule };
}
