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
import type { Message, ToolDefinition } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { anyWord, type CallFormat, optional } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
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
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import { canonicalJson, tryParseJson } from "../../json-text.ts";
import { CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, CALLS_SECTION, TOOL_SEP } from "./deepseek-calls.ts";

const BOS = "<｜begin▁of▁sentence｜>";
const EOS = "<｜end▁of▁sentence｜>";
const USER = "<｜User｜>";
const ASSISTANT = "<｜Assistant｜>";

/** Control tokens the model itself samples inside an assistant turn. */
const TURN_CONTROL_TOKENS = [CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, TOOL_SEP];
export const DEEPSEEK_CONTROL_TOKENS = [BOS, EOS, USER, ASSISTANT, ...TURN_CONTROL_TOKENS] as const;

/** A block of calls, one per line: `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{args}\n```<｜tool▁call▁end｜>`. */
const DEEPSEEK_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "</think>", modelOpens: false },
  section: CALLS_SECTION,
  separator: "\n",
  // The model may write another type word than `function`, and a bare ``` fence.
  call: {
    open: CALL_BEGIN,
    beforeName: [anyWord("function"), TOOL_SEP],
    afterName: ["\n```", optional("json"), "\n"],
    close: `\n\`\`\`${CALL_END}`,
  },
  arguments: { kind: "json" },
};

const DEEPSEEK_THINKING_PREFILL = "<think>";
const DEEPSEEK_NO_THINKING_PREFILL = "</think>";

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

function assistantItems(message: Message): Item[] {
  const items: Item[] = [];
  let calls: Part[] | undefined;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolUse") {
      if (calls === undefined) {
        calls = [{ template: CALLS_SECTION.open }];
        items.push({ kind: "call", parts: calls });
      } else calls.push({ template: DEEPSEEK_CALLS.separator });
      calls.push(...callParts(DEEPSEEK_CALLS, b.value.name, b.value.inputJson));
      continue;
    }
    calls?.push({ template: CALLS_SECTION.close });
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
  calls?.push({ template: CALLS_SECTION.close });
  if (!items.some((item) => item.kind === "thinking"))
    items.unshift({ kind: "thinking", parts: [{ template: DEEPSEEK_NO_THINKING_PREFILL }] });
  return items;
}

const assistantSeparator = (prev: Item, next: Item): string =>
  prev.kind === "thinking" || next.kind === "call" ? "" : defaultSeparator(prev, next);

function toolResultParts(result: Parameters<typeof toolResultText>[0]): Part[] {
  return [{ template: "<tool_result>" }, { content: toolResultText(result) }, { template: "</tool_result>" }];
}

const DEEPSEEK: FamilySpec = {
  name: "deepseek",
  tokens: { control: DEEPSEEK_CONTROL_TOKENS, turn: TURN_CONTROL_TOKENS, endOfTurn: EOS, endOfGeneration: [EOS] },
  calls: DEEPSEEK_CALLS,
  header: (conversation) => {
    const system = conversation.system.join("\n\n");
    const parts: Part[] = [{ template: BOS }, { content: system }];
    if (conversation.tools.length > 0) parts.push(...toolsSectionParts(conversation.tools, system !== ""));
    return parts;
  },
  // DeepSeek has no system turn marker: a role:system message renders in place.
  system: (message, ctx) => {
    const first = ctx.index === 0 && ctx.conversation.system.join("") === "" && ctx.conversation.tools.length === 0;
    return [{ template: first ? "" : "\n\n" }, { content: systemMessageText(message) }];
  },
  user: (message) => [{ template: USER }, ...joinItems(userItems(message, toolResultParts), defaultSeparator)],
  assistantHeader: () => ASSISTANT,
  assistantBody: (message) => joinItems(assistantItems(message), assistantSeparator),
  assistantClose: () => EOS,
  generation: (ctx) => ({
    header: ASSISTANT,
    prefill: ctx.thinking ? DEEPSEEK_THINKING_PREFILL : DEEPSEEK_NO_THINKING_PREFILL,
    thinkingOpen: ctx.thinking,
  }),
};

export class DeepSeekFormat extends FamilyFormat {
  constructor() {
    super(DEEPSEEK);
  }
}
