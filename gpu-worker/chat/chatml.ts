/**
 * ChatML with Hermes-style tools, as Qwen2.5/Qwen3 render it:
 *   <|im_start|>system\n{system}\n\n# Tools ... <tools>\n{tool json}\n</tools> ...<|im_end|>\n
 *   <|im_start|>user\n{text}<|im_end|>\n
 *   <|im_start|>assistant\n<think>\n{thinking}\n</think>\n\n{text}\n<tool_call>\n{"name": "X", "arguments": {...}}\n</tool_call><|im_end|>\n
 *   <|im_start|>user\n<tool_response>\n{result}\n</tool_response>\n<tool_response>\n...\n</tool_response><|im_end|>\n
 *   <|im_start|>assistant\n<think>\n            (thinking enabled/adaptive: sampling starts inside thinking)
 *   <|im_start|>assistant\n<think>\n\n</think>\n\n   (thinking disabled: Qwen3's no-think form)
 * Unlike Qwen3's template, thinking of earlier turns is kept (the live KV holds it).
 */
import {
  type Conversation,
  type Message,
  Role,
  ThinkingMode,
  type ToolDefinition,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import {
  contextText,
  defaultSeparator,
  emitParts,
  type Item,
  joinItems,
  type Part,
  systemMessageText,
  toolInputText,
  toolResultText,
  userItems,
} from "./content.ts";
import { canonicalJson, isPlainObject, tryParseJson } from "./json-text.ts";
import { StreamingOutputParser, type ToolCallEvent } from "./output-parser.ts";
import { ControlTokenSplitter, PromptBuilder } from "./prompt-builder.ts";
import type { ToolCallMarkup } from "./tool-grammar.ts";
import * as grammars from "./tool-grammar.ts";
import type {
  ChatFormat,
  FixedToolCall,
  OutputParser,
  RenderedPrompt,
  RenderOptions,
  ToolCallGrammarOptions,
} from "./types.ts";

const IM_START = "<|im_start|>";
const IM_END = "<|im_end|>";
export const CHATML_CONTROL_TOKENS = [IM_START, IM_END, "<|endoftext|>"] as const;

export const CHATML_TOOL_MARKUP: ToolCallMarkup = {
  thinkingClose: "</think>\n\n",
  blockOpen: "",
  blockClose: "",
  separator: "\n",
  callOpen: (name) => `<tool_call>\n{"name": ${JSON.stringify(name)}, "arguments": `,
  callClose: "}\n</tool_call>",
};

export const CHATML_THINKING_PREFILL = "<think>\n";
export const CHATML_NO_THINKING_PREFILL = "<think>\n\n</think>\n\n";

/** The Hermes/Qwen tools preamble around the tool signatures (also used by the llama-server peer bench). */
export const TOOLS_INTRO =
  "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>";
export const TOOLS_OUTRO =
  "\n</tools>\n\nFor each function call, return a json object with function name and arguments within " +
  '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** `{"type": "function", "function": {...}}` as Qwen's template prints a tool. */
export function hermesToolJson(tool: ToolDefinition): string {
  const parsed = tool.inputSchemaJson.trim() === "" ? { value: {} } : tryParseJson(tool.inputSchemaJson);
  const parameters = parsed === undefined ? tool.inputSchemaJson : canonicalJson(parsed.value);
  const description = tool.description === "" ? "" : `, "description": ${JSON.stringify(tool.description)}`;
  return `{"type": "function", "function": {"name": ${JSON.stringify(tool.name)}${description}, "parameters": ${parameters}}}`;
}

function callParts(name: string, inputJson: string): Part[] {
  return [
    { template: '<tool_call>\n{"name": ' },
    { content: JSON.stringify(name) },
    { template: ', "arguments": ' },
    { content: toolInputText(inputJson) },
    { template: CHATML_TOOL_MARKUP.callClose },
  ];
}

function assistantItems(message: Message): Item[] {
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
      items.push({ kind: "call", parts: callParts(b.value.name, b.value.inputJson) });
    } else {
      const text = contextText(block);
      if (text !== undefined) items.push({ kind: "other", parts: [{ content: text }] });
    }
  }
  return items;
}

const assistantSeparator = (prev: Item, next: Item): string =>
  prev.kind === "thinking" ? "" : defaultSeparator(prev, next);

function toolResponseParts(result: Parameters<typeof toolResultText>[0]): Part[] {
  return [{ template: "<tool_response>\n" }, { content: toolResultText(result) }, { template: "\n</tool_response>" }];
}

function parseToolSpan(raw: string): Omit<ToolCallEvent, "offset">[] | undefined {
  const inner = raw.slice("<tool_call>".length, raw.length - "</tool_call>".length).trim();
  const parsed = tryParseJson(inner);
  if (parsed === undefined || !isPlainObject(parsed.value)) return undefined;
  const { name } = parsed.value;
  let args = parsed.value.arguments;
  if (typeof args === "string") args = tryParseJson(args)?.value;
  if (typeof name !== "string" || name === "" || !isPlainObject(args)) return undefined;
  return [{ type: "tool_call", name, argumentsJson: JSON.stringify(args), raw }];
}

export class ChatMlFormat implements ChatFormat {
  readonly name = "chatml";
  readonly endOfTurnText = IM_END;
  readonly endOfGenerationTexts = [IM_END, "<|endoftext|>"];
  readonly #splitter = new ControlTokenSplitter(CHATML_CONTROL_TOKENS);

  render(conversation: Conversation, options: RenderOptions = {}): RenderedPrompt {
    const b = new PromptBuilder(this.#splitter);
    const system = conversation.system.join("\n\n");
    if (system !== "" || conversation.tools.length > 0) {
      b.template(`${IM_START}system\n`).content(system);
      if (conversation.tools.length > 0) {
        b.template(system === "" ? TOOLS_INTRO : `\n\n${TOOLS_INTRO}`);
        for (const tool of conversation.tools) b.template("\n").content(hermesToolJson(tool));
        b.template(TOOLS_OUTRO);
      }
      b.template(`${IM_END}\n`);
    }
    const messageOffsets: number[] = [];
    const { messages } = conversation;
    let open: { start: number; prefill: string } | undefined;
    messages.forEach((message, i) => {
      messageOffsets.push(b.length);
      if (message.role === Role.SYSTEM) {
        b.template(`${IM_START}system\n`).content(systemMessageText(message)).template(`${IM_END}\n`);
      } else if (message.role === Role.ASSISTANT) {
        const start = b.length;
        const raw = options.rawAssistantTurn?.(message, i);
        const items = raw === undefined ? assistantItems(message) : [];
        if (i === messages.length - 1 && raw === undefined && items.length === 0) return; // empty: plain generation
        b.template(`${IM_START}assistant\n`);
        const contentStart = b.length;
        if (raw !== undefined) b.content(raw);
        else emitParts(b, joinItems(items, assistantSeparator));
        // A trailing assistant message is continued (prefill), not closed.
        if (i === messages.length - 1) open = { start, prefill: b.text.slice(contentStart) };
        else b.template(`${IM_END}\n`);
      } else {
        const parts = joinItems(userItems(message, toolResponseParts), defaultSeparator);
        b.template(`${IM_START}user\n`);
        emitParts(b, parts);
        b.template(`${IM_END}\n`);
      }
    });
    if (open !== undefined) {
      return {
        segments: b.segments,
        text: b.text,
        messageOffsets,
        generationPrefixStart: open.start,
        generationPrefill: open.prefill,
        thinkingOpen: false,
      };
    }
    const generationPrefixStart = b.length;
    const thinking = (conversation.thinking?.mode ?? ThinkingMode.DISABLED) !== ThinkingMode.DISABLED;
    const prefill = thinking ? CHATML_THINKING_PREFILL : CHATML_NO_THINKING_PREFILL;
    b.template(`${IM_START}assistant\n`).template(prefill);
    return {
      segments: b.segments,
      text: b.text,
      messageOffsets,
      generationPrefixStart,
      generationPrefill: prefill,
      thinkingOpen: thinking,
    };
  }

  createOutputParser(options: { thinkingOpen: boolean }): OutputParser {
    return new StreamingOutputParser(
      { thinkClose: "</think>", toolOpen: "<tool_call>", toolClose: "</tool_call>", parseToolSpan },
      options,
    );
  }

  toolCallGrammar(options: ToolCallGrammarOptions): string {
    return grammars.toolCallGrammar(CHATML_TOOL_MARKUP, options);
  }

  fixedTextGrammar(text: string, thinkingOpen = false): string {
    return grammars.fixedTextGrammar(CHATML_TOOL_MARKUP, text, thinkingOpen);
  }

  fixedToolCallsGrammar(calls: readonly FixedToolCall[], thinkingOpen: boolean): string {
    return grammars.fixedToolCallsGrammar(CHATML_TOOL_MARKUP, calls, thinkingOpen);
  }

  plainTextGrammar(thinkingOpen: boolean): string {
    return grammars.plainTextGrammar(CHATML_TOOL_MARKUP, thinkingOpen);
  }
}
