/**
 * DeepSeek V3/R1-style format (thinking tags placed as in V3.1):
 *   <｜begin▁of▁sentence｜>{system}\n\n## Tools ...
 *   <｜User｜>{text}
 *   <｜Assistant｜><think>{thinking}</think>{text}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>...<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>
 *   <｜User｜><tool_result>{result}</tool_result>\n<tool_result>{result}</tool_result>
 *   <｜Assistant｜><think>      (thinking enabled/adaptive)    <｜Assistant｜></think>   (disabled)
 * An assistant turn without thinking renders "</think>" first, as V3.1 does. A role:system message
 * renders in place as "\n\n{text}" (DeepSeek has no system turn marker). Thinking is kept.
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

const BOS = "<｜begin▁of▁sentence｜>";
const EOS = "<｜end▁of▁sentence｜>";
const USER = "<｜User｜>";
const ASSISTANT = "<｜Assistant｜>";
const CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
const CALLS_END = "<｜tool▁calls▁end｜>";
const CALL_BEGIN = "<｜tool▁call▁begin｜>";
const CALL_END = "<｜tool▁call▁end｜>";
const TOOL_SEP = "<｜tool▁sep｜>";

/** Control tokens the model itself samples inside an assistant turn. */
const TURN_CONTROL_TOKENS = [CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, TOOL_SEP];
export const DEEPSEEK_CONTROL_TOKENS = [BOS, EOS, USER, ASSISTANT, ...TURN_CONTROL_TOKENS] as const;

export const DEEPSEEK_TOOL_MARKUP: ToolCallMarkup = {
  thinkingClose: "</think>",
  blockOpen: CALLS_BEGIN,
  blockClose: CALLS_END,
  separator: "\n",
  callOpen: (name) => `${CALL_BEGIN}function${TOOL_SEP}${name}\n\`\`\`json\n`,
  callClose: `\n\`\`\`${CALL_END}`,
};

export const DEEPSEEK_THINKING_PREFILL = "<think>";
export const DEEPSEEK_NO_THINKING_PREFILL = "</think>";

const TOOLS_OUTRO =
  "\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n" +
  `${CALLS_BEGIN}${CALL_BEGIN}function${TOOL_SEP}tool_call_name\n\`\`\`json\ntool_call_arguments\n\`\`\`${CALL_END}{additional_tool_calls}${CALLS_END}\n\n` +
  "Where:\n- `tool_call_name` must be an exact match to one of the available tools\n" +
  "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
  "- For multiple tool calls, put each call on its own line inside the one block";

function toolsSectionParts(tools: readonly ToolDefinition[], afterSystem: boolean): Part[] {
  const parts: Part[] = [
    { template: `${afterSystem ? "\n\n" : ""}## Tools\nYou have access to the following tools:\n` },
  ];
  for (const tool of tools) {
    const parsed = tool.inputSchemaJson.trim() === "" ? { value: {} } : tryParseJson(tool.inputSchemaJson);
    const parameters = parsed === undefined ? tool.inputSchemaJson : canonicalJson(parsed.value);
    parts.push(
      { template: "\n### " },
      { content: tool.name },
      { template: "\nDescription: " },
      { content: tool.description },
    );
    parts.push({ template: "\n\nParameters: " }, { content: parameters }, { template: "\n" });
  }
  parts.push({ template: TOOLS_OUTRO });
  return parts;
}

function callParts(name: string, inputJson: string): Part[] {
  return [
    { template: `${CALL_BEGIN}function${TOOL_SEP}` },
    { content: name },
    { template: "\n```json\n" },
    { content: toolInputText(inputJson) },
    { template: DEEPSEEK_TOOL_MARKUP.callClose },
  ];
}

function assistantItems(message: Message): Item[] {
  const items: Item[] = [];
  let calls: Part[] | undefined;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolUse") {
      if (calls === undefined) {
        calls = [{ template: CALLS_BEGIN }];
        items.push({ kind: "call", parts: calls });
      } else calls.push({ template: DEEPSEEK_TOOL_MARKUP.separator });
      calls.push(...callParts(b.value.name, b.value.inputJson));
      continue;
    }
    calls?.push({ template: CALLS_END });
    calls = undefined;
    if (b.case === "thinking") {
      if (b.value.thinking !== "")
        items.push({
          kind: "thinking",
          parts: [{ template: "<think>" }, { content: b.value.thinking }, { template: "</think>" }],
        });
    } else if (b.case === "text") {
      if (b.value.text !== "") items.push({ kind: "text", parts: [{ content: b.value.text }] });
    } else {
      const text = contextText(block);
      if (text !== undefined) items.push({ kind: "other", parts: [{ content: text }] });
    }
  }
  calls?.push({ template: CALLS_END });
  if (!items.some((item) => item.kind === "thinking"))
    items.unshift({ kind: "thinking", parts: [{ template: DEEPSEEK_NO_THINKING_PREFILL }] });
  return items;
}

const assistantSeparator = (prev: Item, next: Item): string =>
  prev.kind === "thinking" || next.kind === "call" ? "" : defaultSeparator(prev, next);

function toolResultParts(result: Parameters<typeof toolResultText>[0]): Part[] {
  return [{ template: "<tool_result>" }, { content: toolResultText(result) }, { template: "</tool_result>" }];
}

const CALL_PATTERN =
  /<｜tool▁call▁begin｜>([^<\n]*)<｜tool▁sep｜>([^\n]*)\n```(?:json)?\n([\s\S]*?)\n```<｜tool▁call▁end｜>/g;

function parseToolSpan(raw: string): Omit<ToolCallEvent, "offset">[] | undefined {
  const inner = raw.slice(CALLS_BEGIN.length, raw.length - CALLS_END.length);
  const calls: Omit<ToolCallEvent, "offset">[] = [];
  let last = 0;
  for (const m of inner.matchAll(CALL_PATTERN)) {
    const at = m.index ?? 0;
    if (inner.slice(last, at).trim() !== "") return undefined;
    last = at + m[0].length;
    const name = (m[2] ?? "").trim();
    const args = tryParseJson(m[3] ?? "");
    if (name === "" || args === undefined || !isPlainObject(args.value)) return undefined;
    calls.push({ type: "tool_call", name, argumentsJson: JSON.stringify(args.value), raw: m[0] });
  }
  if (calls.length === 0 || inner.slice(last).trim() !== "") return undefined;
  return calls;
}

export class DeepSeekFormat implements ChatFormat {
  readonly name = "deepseek";
  readonly endOfTurnText = EOS;
  readonly endOfGenerationTexts = [EOS];
  readonly #splitter = new ControlTokenSplitter(DEEPSEEK_CONTROL_TOKENS);
  readonly #turnSplitter = new ControlTokenSplitter(TURN_CONTROL_TOKENS);

  render(conversation: Conversation, options: RenderOptions = {}): RenderedPrompt {
    const b = new PromptBuilder(this.#splitter);
    const system = conversation.system.join("\n\n");
    b.template(BOS).content(system);
    if (conversation.tools.length > 0) emitParts(b, toolsSectionParts(conversation.tools, system !== ""));
    const messageOffsets: number[] = [];
    const { messages } = conversation;
    let open: { start: number; prefill: string } | undefined;
    messages.forEach((message, i) => {
      messageOffsets.push(b.length);
      if (message.role === Role.SYSTEM) {
        if (b.text !== BOS) b.template("\n\n");
        b.content(systemMessageText(message));
      } else if (message.role === Role.ASSISTANT) {
        const start = b.length;
        const raw = options.rawAssistantTurn?.(message, i);
        const hasContent = raw !== undefined || message.content.some((c) => c.block.case !== undefined);
        if (i === messages.length - 1 && !hasContent) return; // empty: plain generation
        b.template(ASSISTANT);
        const contentStart = b.length;
        // Raw sampled text: only the tool-call markers the model samples become control tokens.
        if (raw !== undefined)
          for (const s of this.#turnSplitter.split(raw)) s.special ? b.template(s.text) : b.content(s.text);
        else emitParts(b, joinItems(assistantItems(message), assistantSeparator));
        if (i === messages.length - 1) open = { start, prefill: b.text.slice(contentStart) };
        else b.template(EOS);
      } else {
        b.template(USER);
        emitParts(b, joinItems(userItems(message, toolResultParts), defaultSeparator));
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
    const prefill = thinking ? DEEPSEEK_THINKING_PREFILL : DEEPSEEK_NO_THINKING_PREFILL;
    b.template(ASSISTANT).template(prefill);
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
      { thinkClose: "</think>", toolOpen: CALLS_BEGIN, toolClose: CALLS_END, parseToolSpan },
      options,
    );
  }

  toolCallGrammar(options: ToolCallGrammarOptions): string {
    return grammars.toolCallGrammar(DEEPSEEK_TOOL_MARKUP, options);
  }

  fixedTextGrammar(text: string, thinkingOpen = false): string {
    return grammars.fixedTextGrammar(DEEPSEEK_TOOL_MARKUP, text, thinkingOpen);
  }

  fixedToolCallsGrammar(calls: readonly FixedToolCall[], thinkingOpen: boolean): string {
    return grammars.fixedToolCallsGrammar(DEEPSEEK_TOOL_MARKUP, calls, thinkingOpen);
  }

  plainTextGrammar(thinkingOpen: boolean): string {
    return grammars.plainTextGrammar(DEEPSEEK_TOOL_MARKUP, thinkingOpen);
  }
}
