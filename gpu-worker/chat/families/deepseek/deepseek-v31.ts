/**
 * DeepSeek V3.1 as its chat template renders it:
 *   <｜begin▁of▁sentence｜>{system}{tools, as the model card puts them in the system prompt}
 *   <｜User｜>{text}<｜Assistant｜></think>{text}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>…<｜tool▁calls▁end｜><｜end▁of▁sentence｜>
 *   <｜tool▁output▁begin｜>{result}<｜tool▁output▁end｜>…   (then the model answers without a role marker)
 *   <｜Assistant｜><think>   (thinking on)    <｜Assistant｜></think>   (off)
 * Where the template rewrites history, Frontier's exact transcript wins: the template drops the
 * reasoning of earlier turns (`</think>` only) and hoists role:system messages into the opening
 * system prompt; Frontier keeps reasoning and renders a later system message in place.
 */
import type { Conversation, Message } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
import { contextText, type Part, systemMessageText, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec, type RenderContext } from "../../engine/family.ts";
import { canonicalJson, tryParseJson } from "../../json-text.ts";
import { CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, CALLS_SECTION, TOOL_SEP } from "./deepseek-calls.ts";

const BOS = "<｜begin▁of▁sentence｜>";
const EOS = "<｜end▁of▁sentence｜>";
const USER = "<｜User｜>";
const ASSISTANT = "<｜Assistant｜>";
const OUTPUT_BEGIN = "<｜tool▁output▁begin｜>";
const OUTPUT_END = "<｜tool▁output▁end｜>";
const TURN_CONTROL_TOKENS = [CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, TOOL_SEP, "<think>", "</think>"];
const CONTROL_TOKENS = [BOS, EOS, USER, ASSISTANT, OUTPUT_BEGIN, OUTPUT_END, ...TURN_CONTROL_TOKENS];

/** A block of calls back to back: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{args}<｜tool▁call▁end｜>`. */
const V31_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "</think>", modelOpens: false },
  section: CALLS_SECTION,
  separator: "",
  call: { open: CALL_BEGIN, afterName: TOOL_SEP, close: CALL_END },
  arguments: { kind: "json" },
};

const TOOLS_OUTRO =
  "IMPORTANT: ALWAYS adhere to this exact format for tool use:\n" +
  `${CALLS_BEGIN}${CALL_BEGIN}tool_call_name${TOOL_SEP}tool_call_arguments${CALL_END}{{additional_tool_calls}}${CALLS_END}\n\n` +
  "Where:\n\n- `tool_call_name` must be an exact match to one of the available tools\n" +
  "- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n" +
  "- For multiple tool calls, chain them directly without separators or spaces";

function header(conversation: Conversation): Part[] {
  const system = conversation.system.join("\n\n");
  const parts: Part[] = [{ template: BOS }, { content: system }];
  if (conversation.tools.length === 0) return parts;
  parts.push({ template: `${system === "" ? "" : "\n\n"}## Tools\nYou have access to the following tools:\n` });
  for (const tool of conversation.tools) {
    const parsed = tool.inputSchemaJson.trim() === "" ? { value: {} } : tryParseJson(tool.inputSchemaJson);
    const parameters = parsed === undefined ? tool.inputSchemaJson : canonicalJson(parsed.value);
    parts.push({ content: `\n### ${tool.name}\nDescription: ${tool.description}\n\nParameters: ${parameters}\n` });
  }
  parts.push({ template: `\n${TOOLS_OUTRO}` });
  return parts;
}

const onlyResults = (message: Message | undefined): boolean =>
  message !== undefined && message.content.length > 0 && message.content.every((c) => c.block.case === "toolResult");

function user(message: Message): Part[] {
  const parts: Part[] = [];
  const text: string[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult")
      parts.push({ template: OUTPUT_BEGIN }, { content: toolResultText(b.value) }, { template: OUTPUT_END });
    else {
      const value = contextText(block);
      if (value !== undefined) text.push(value);
    }
  }
  if (text.length > 0 || parts.length === 0) parts.push({ template: USER }, { content: text.join("\n\n") });
  return parts;
}

function assistantBody(message: Message, ctx: RenderContext): Part[] {
  const parts: Part[] = [];
  const thinking = message.content
    .flatMap((c) => (c.block.case === "thinking" ? [c.block.value.thinking] : []))
    .join("");
  if (thinking !== "") parts.push({ template: "<think>" }, { content: thinking }, { template: "</think>" });
  else if (!onlyResults(ctx.previous)) parts.push({ template: "</think>" });
  let calls = 0;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") continue;
    if (b.case === "toolUse") {
      if (calls++ === 0) parts.push({ template: CALLS_SECTION.open });
      parts.push(...callParts(V31_CALLS, b.value.name, b.value.inputJson));
    } else {
      const value = contextText(block);
      if (value !== undefined) parts.push({ content: value });
    }
  }
  if (calls > 0) parts.push({ template: CALLS_SECTION.close });
  return parts;
}

const DEEPSEEK_V31: FamilySpec = {
  name: "deepseek-v3.1",
  tokens: { control: CONTROL_TOKENS, turn: TURN_CONTROL_TOKENS, endOfTurn: EOS, endOfGeneration: [EOS] },
  calls: V31_CALLS,
  header,
  system: (message) => [{ template: "\n\n" }, { content: systemMessageText(message) }],
  user,
  // After tool outputs the template opens no assistant turn: the model answers right away.
  assistantHeader: (ctx) => (onlyResults(ctx.previous) ? "" : ASSISTANT),
  assistantBody,
  assistantClose: () => EOS,
  generation: (ctx) =>
    onlyResults(ctx.previous)
      ? { header: "", prefill: "", thinkingOpen: false }
      : { header: ASSISTANT, prefill: ctx.thinking ? "<think>" : "</think>", thinkingOpen: ctx.thinking },
};

export class DeepSeekV31Format extends FamilyFormat {
  constructor() {
    super(DEEPSEEK_V31);
  }
}
