/** The chat-format families Frontier serves, by the names `FRONTIER_CHAT_FORMAT` takes. */

export const CHAT_FAMILIES = [
  "chatml",
  "qwen3",
  "qwen3-coder",
  "qwen3.5",
  "harmony",
  "glm",
  "glm-4.7",
  "deepseek",
  "deepseek-v3.1",
  "kimi-k2",
  "minimax-m2",
] as const;
export type ChatFamily = (typeof CHAT_FAMILIES)[number];
/** A family, or `auto`: recognised from the model's chat template. */
export type ChatFormatName = ChatFamily | "auto";
export const CHAT_FORMAT_NAMES: readonly ChatFormatName[] = [...CHAT_FAMILIES, "auto"];
