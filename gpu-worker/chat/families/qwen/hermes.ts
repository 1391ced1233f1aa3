/**
 * Hermes-style JSON tool calls inside ChatML, as Qwen2.5 and Qwen3 render them (shared by the
 * `chatml` and `qwen3` families):
 *   <|im_start|>system\n{system}\n\n# Tools ... <tools>\n{tool json}\n</tools> ...<|im_end|>\n
 *   <|im_start|>user\n{text}<|im_end|>\n
 *   <|im_start|>assistant\n<think>\n{thinking}\n</think>\n\n{text}\n<tool_call>\n{"name": "X", "arguments": {...}}\n</tool_call><|im_end|>\n
 *   <|im_start|>user\n<tool_response>\n{result}\n</tool_response>\n<tool_response>\n...\n</tool_response><|im_end|>\n
 */
import type { Conversation, Message, ToolDefinition } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat, FamilyTokens } from "../../call-format.ts";
import { callParts, toolCallMarkup } from "../../engine/call-markup.ts";
import {
  contextText,
  defaultSeparator,
  type Item,
  joinItems,
  type Part,
  systemMessageText,
  toolResultText,
  userItems,
} from "../../engine/content.ts";
import type { FamilySpec } from "../../engine/family.ts";
import type { ToolCallMarkup } from "../../grammar/tool-grammar.ts";
import { canonicalJson, tryParseJson } from "../../json-text.ts";

export const IM_START = "<|im_start|>";
export const IM_END = "<|im_end|>";
export const CHATML_CONTROL_TOKENS = [IM_START, IM_END, "<|endoftext|>"] as const;

export const CHATML_TOKENS: FamilyTokens = {
  control: CHATML_CONTROL_TOKENS,
  turn: [],
  endOfTurn: IM_END,
  endOfGeneration: [IM_END, "<|endoftext|>"],
};

/** Hermes calls: `<tool_call>\n{"name": "X", "arguments": {...}}\n</tool_call>`, one per line. */
export const HERMES_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "</think>\n\n", modelOpens: false },
  separator: "\n",
  call: { open: "<tool_call>\n", close: "\n</tool_call>" },
  arguments: { kind: "json-envelope", nameKey: "name", argumentsKey: "arguments" },
};

export const HERMES_TOOL_MARKUP: ToolCallMarkup = toolCallMarkup("chatml", HERMES_CALLS);
/** The Hermes/Qwen tools preamble around the tool signatures (also used by the llama-server peer bench). */
export const TOOLS_INTRO =
  "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
export const TOOLS_OUTRO =
  "\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** `{"type": "function", "function": {...}}` as Qwen's template prints a tool (`tool | tojson`). */
export function hermesToolJson(tool: ToolDefinition): string {
  const parsed = tool.inputSchemaJson.trim() === "" ? { value: {} } : tryParseJson(tool.inputSchemaJson);
  const parameters = parsed === undefined ? tool.inputSchemaJson : canonicalJson(parsed.value);
  const description = tool.description === "" ? "" : `, "description": ${JSON.stringify(tool.description)}`;
  return `{"type": "function", "function": {"name": ${JSON.stringify(tool.name)}${description}, "parameters": ${parameters}}}`;
}

/** `<|im_start|>system\n{system}{tools}<|im_end|>\n`, when there is a system prompt or tools. */
export function hermesHeader(conversation: Conversation): Part[] {
  const system = conversation.system.join("\n\n");
  if (system === "" && conversation.tools.length === 0) return [];
  const parts: Part[] = [{ template: `${IM_START}system\n` }, { content: system }];
  if (conversation.tools.length > 0) {
    parts.push({ template: system === "" ? TOOLS_INTRO : `\n\n${TOOLS_INTRO}` });
    for (const tool of conversation.tools) parts.push({ template: "\n" }, { content: hermesToolJson(tool) });
    parts.push({ template: TOOLS_OUTRO });
  }
  parts.push({ template: `${IM_END}\n` });
  return parts;
}

export function chatMlSystem(message: Message): Part[] {
  return [{ template: `${IM_START}system\n` }, { content: systemMessageText(message) }, { template: `${IM_END}\n` }];
}

export function hermesUser(message: Message): Part[] {
  const results = (result: Parameters<typeof toolResultText>[0]): Part[] => [
    { template: "<tool_response>\n" },
    { content: toolResultText(result) },
    { template: "\n</tool_response>" },
  ];
  return [
    { template: `${IM_START}user\n` },
    ...joinItems(userItems(message, results), defaultSeparator),
    { template: `${IM_END}\n` },
  ];
}

export function hermesAssistant(message: Message): Part[] {
  const items: Item[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") {
      if (b.value.thinking !== "") {
        items.push({
          kind: "thinking",
          parts: [{ template: "<think>\n" }, { content: b.value.thinking }, { template: "\n</think>\n\n" }],
        });
      }
    } else if (b.case === "text") {
      if (b.value.text !== "") items.push({ kind: "text", parts: [{ content: b.value.text }] });
    } else if (b.case === "toolUse") {
      items.push({ kind: "call", parts: callParts(HERMES_CALLS, b.value.name, b.value.inputJson) });
    } else {
      const text = contextText(block);
      if (text !== undefined) items.push({ kind: "other", parts: [{ content: text }] });
    }
  }
  return joinItems(items, (prev, next) => (prev.kind === "thinking" ? "" : defaultSeparator(prev, next)));
}

/**
 * Everything of a ChatML + Hermes family but its name, generation prefix and whether the model
 * opens thinking itself (`chatml` and `qwen3` differ only there).
 */
export const CHATML_HERMES_TURNS: Omit<FamilySpec, "name" | "calls" | "generation"> = {
  tokens: CHATML_TOKENS,
  header: hermesHeader,
  system: chatMlSystem,
  user: hermesUser,
  assistantHeader: () => `${IM_START}assistant\n`,
  assistantBody: hermesAssistant,
  assistantClose: () => `${IM_END}\n`,
};
