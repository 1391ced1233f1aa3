/** Picks the chat format for a model: configured by name, or guessed from its chat template. */
import { ChatMlFormat } from "./chatml.ts";
import { DeepSeekFormat } from "./deepseek.ts";
import type { ChatFormat } from "./types.ts";

export type ChatFormatName = "chatml" | "deepseek" | "auto";

/** `auto`: a template mentioning `<｜User｜>` is DeepSeek, `<|im_start|>` ChatML; ChatML otherwise. */
export function selectChatFormat(name: ChatFormatName, chatTemplate: string | undefined): ChatFormat {
  switch (name) {
    case "chatml":
      return new ChatMlFormat();
    case "deepseek":
      return new DeepSeekFormat();
    case "auto":
      if (chatTemplate?.includes("<｜User｜>")) return new DeepSeekFormat();
      return new ChatMlFormat();
    default: {
      const never: never = name;
      throw new RangeError(`unknown chat format: ${String(never)}`);
    }
  }
}
