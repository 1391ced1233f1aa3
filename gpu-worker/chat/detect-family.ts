/**
 * Which chat-format family a GGUF speaks, read from its metadata in a fixed order:
 *   1. the chat template's fingerprint (`tokenizer.chat_template`): the markup each family's real
 *      template writes, which no other family's template contains;
 *   2. with no template at all: the architecture (`gpt-oss`), then control tokens that only one
 *      family's vocabulary holds, then the pre-tokenizer (`tokenizer.ggml.pre`) where it alone decides.
 * Each match names its rule, so the worker can log why it chose a family. A template that matches
 * no rule is never guessed from the vocabulary: serving a prompt the model was not trained on
 * would be silent garbage, so it is an error that says what was found and how to override it.
 */
import { CHAT_FAMILIES, type ChatFamily } from "./family-names.ts";

/** What the GGUF's metadata says about its chat format. */
export interface ModelTemplateInfo {
  chatTemplate: string | undefined;
  architecture?: string;
  /** `tokenizer.ggml.pre`, e.g. "qwen2", "deepseek-v3", "glm4". */
  tokenizerPre?: string;
  /** The vocabulary's control and user-defined tokens (as text). */
  specialTokens?: readonly string[];
}

export interface FamilyDetection {
  family: ChatFamily;
  /** The rule that matched, for the startup log, e.g. `template: "<|im_start|>" + "<function="`. */
  rule: string;
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

interface TemplateRule {
  family: ChatFamily;
  /** Every one of these must be in the template. */
  all: readonly string[];
  /** And, when given, at least one of these. */
  any?: readonly string[];
}

/** Most specific first: the first rule whose markers are all present wins. */
const TEMPLATE_RULES: readonly TemplateRule[] = [
  { family: "harmony", all: ["<|start|>", "<|channel|>"] },
  { family: "deepseek", all: ["<｜User｜>"], any: ["```json", "DSML"] },
  { family: "deepseek-v3.1", all: ["<｜User｜>"] },
  // GLM-4.7/5 write a call's arguments with nothing between the tags; GLM-4.5/4.6 put a newline there.
  { family: "glm-4.7", all: ["[gMASK]", "</arg_key><arg_value>"] },
  { family: "glm", all: ["[gMASK]"] },
  { family: "glm", all: ["<|observation|>"] },
  { family: "kimi-k2", all: ["<|im_assistant|>", "<|im_middle|>"] },
  { family: "minimax-m2", all: ["]~b]"], any: ["]~!b[", "<minimax:tool_call>"] },
  // Qwen3.5/3.6: the coder's XML calls, tools listed as JSON, thinking switchable.
  { family: "qwen3.5", all: ["<|im_start|>", "<function=", "<parameter=", "<think>", "enable_thinking", "tojson"] },
  { family: "qwen3-coder", all: ["<|im_start|>", "<function=", "<parameter="] },
  { family: "qwen3", all: ["<|im_start|>"], any: ["<think>", "enable_thinking"] },
  { family: "chatml", all: ["<|im_start|>"] },
];

/** Control tokens only one family's vocabulary has (used only when the GGUF carries no template). */
const TOKEN_RULES: readonly { family: ChatFamily; token: string }[] = [
  { family: "harmony", token: "<|channel|>" },
  { family: "glm", token: "<|observation|>" },
  { family: "kimi-k2", token: "<|im_middle|>" },
  { family: "minimax-m2", token: "]~b]" },
];

/** Pre-tokenizers that name one family alone (ambiguous ones, like qwen2, are not here). */
const PRE_RULES: Readonly<Record<string, ChatFamily>> = {
  glm4: "glm",
  "kimi-k2": "kimi-k2",
  "minimax-m2": "minimax-m2",
};

export function detectFamily(model: ModelTemplateInfo): FamilyDetection {
  const t = model.chatTemplate;
  if (model.architecture === "gpt-oss") return { family: "harmony", rule: 'architecture "gpt-oss"' };
  if (t !== undefined && t.trim() !== "") {
    for (const rule of TEMPLATE_RULES) {
      if (!rule.all.every((m) => t.includes(m))) continue;
      const hit = rule.any?.find((m) => t.includes(m));
      if (rule.any !== undefined && hit === undefined) continue;
      const markers = [...rule.all, ...(hit === undefined ? [] : [hit])].map((m) => JSON.stringify(m));
      return { family: rule.family, rule: `template: ${markers.join(" + ")}` };
    }
    throw new UnknownChatTemplateError(`The GGUF's chat template matches no supported family (${found(model)})`);
  }
  const special = new Set(model.specialTokens ?? []);
  for (const { family, token } of TOKEN_RULES)
    if (special.has(token)) return { family, rule: `no template; control token ${JSON.stringify(token)}` };
  const pre = model.tokenizerPre === undefined ? undefined : PRE_RULES[model.tokenizerPre];
  if (pre !== undefined) return { family: pre, rule: `no template; pre-tokenizer "${model.tokenizerPre}"` };
  throw new UnknownChatTemplateError(`The GGUF has no chat template (${found(model)})`);
}

/** What the metadata held, for the error: the template's start, the pre-tokenizer, a few control tokens. */
function found(model: ModelTemplateInfo): string {
  const parts: string[] = [];
  const t = model.chatTemplate?.trim();
  if (t) parts.push(`template starts ${JSON.stringify(t.length > 60 ? `${t.slice(0, 60)}…` : t)}`);
  parts.push(`architecture ${JSON.stringify(model.architecture ?? "unknown")}`);
  parts.push(`pre-tokenizer ${JSON.stringify(model.tokenizerPre ?? "none")}`);
  const special = (model.specialTokens ?? []).filter((s) => s.startsWith("<")).slice(0, 6);
  if (special.length > 0) parts.push(`control tokens ${special.map((s) => JSON.stringify(s)).join(", ")}…`);
  return parts.join("; ");
}
