/**
 * Qwen3.5 as its chat template renders it (Qwen3.6 is detected here by the same markers; no vendor or
 * llama.cpp copy of its template was found to compare, native/model/chat-templates/README.md): Qwen3-Coder's XML calls (`qwen3-coder.ts`) with these differences:
 *   <|im_start|>system\n# Tools\n\nYou have access to the following functions:\n\n<tools>\n{tool json}…\n</tools>…</IMPORTANT>\n\n{system}<|im_end|>\n
 *   <|im_start|>user\n<tool_response>\n{result}\n</tool_response>\n<tool_response>\n…\n</tool_response><|im_end|>\n
 *   <|im_start|>assistant\n<think>\n{thinking}\n</think>\n\n{text}\n\n<tool_call>…<|im_end|>\n
 *   <|im_start|>assistant\n<think>\n                (thinking on, the template's default)
 *   <|im_start|>assistant\n<think>\n\n</think>\n\n   (thinking off)
 * Tools are listed as JSON (Hermes' `tool | tojson`), not as XML; there is no default system
 * prompt; client text (system, user, tool results) is trimmed, as the template trims it. Every
 * assistant turn after the last user query carries a think block, empty when it had no reasoning.
 * Object and array argument values are JSON in both (the template's `tojson`); booleans and null
 * the template prints with Python's `str` (`True`, `None`), Frontier as JSON.
 * Where the template rewrites history, Frontier's transcript wins: it drops the reasoning of turns
 * before the last user query; Frontier keeps it.
 */
import { type Conversation, type Message, Role } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { contextText, type Part, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec, type RenderContext } from "../../engine/family.ts";
import { hermesToolJson, IM_END, IM_START } from "./hermes.ts";
import { CODER_TOOLS_OUTRO, coderAssistantBody, coderSpec } from "./qwen3-coder.ts";

const TOOLS_INTRO = "# Tools\n\nYou have access to the following functions:\n\n<tools>";
const EMPTY_THINKING = "<think>\n\n</think>\n\n";

function header(conversation: Conversation): Part[] {
  const system = conversation.system.join("\n\n").trim();
  if (conversation.tools.length === 0)
    return system === "" ? [] : [{ template: `${IM_START}system\n` }, { content: system }, { template: `${IM_END}\n` }];
  const parts: Part[] = [{ template: `${IM_START}system\n${TOOLS_INTRO}` }];
  for (const tool of conversation.tools) parts.push({ template: "\n" }, { content: hermesToolJson(tool) });
  parts.push({ template: CODER_TOOLS_OUTRO });
  if (system !== "") parts.push({ template: "\n\n" }, { content: system });
  parts.push({ template: `${IM_END}\n` });
  return parts;
}

/** Tool results in one user turn (`\n<tool_response>` each), then the text, if any, in its own turn. */
function user(message: Message): Part[] {
  const results: Part[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult")
      results.push(
        { template: "\n<tool_response>\n" },
        { content: toolResultText(b.value).trim() },
        { template: "\n</tool_response>" },
      );
    else {
      const text = contextText(block);
      if (text !== undefined) texts.push(text);
    }
  }
  const parts: Part[] = [];
  if (results.length > 0) parts.push({ template: `${IM_START}user` }, ...results, { template: `${IM_END}\n` });
  if (texts.length > 0 || results.length === 0)
    parts.push({ template: `${IM_START}user\n` }, { content: texts.join("\n\n").trim() }, { template: `${IM_END}\n` });
  return parts;
}

/** A user message with text of its own (not only tool results): the template's "user query". */
const isQuery = (m: Message): boolean =>
  m.role === Role.USER && m.content.some((c) => c.block.case !== "toolResult" && contextText(c) !== undefined);

function assistantBody(message: Message, ctx: RenderContext): Part[] {
  const body = coderAssistantBody(message, true);
  const reasoned = message.content.some((c) => c.block.case === "thinking" && c.block.value.thinking !== "");
  const afterLastQuery = !ctx.conversation.messages.slice(ctx.index + 1).some(isQuery);
  return reasoned || !afterLastQuery ? body : [{ template: EMPTY_THINKING }, ...body];
}

const QWEN35: FamilySpec = {
  ...coderSpec(true),
  name: "qwen3.5",
  header,
  user,
  assistantBody,
  generation: (ctx) => ({
    header: `${IM_START}assistant\n`,
    prefill: ctx.thinking ? "<think>\n" : EMPTY_THINKING,
    thinkingOpen: ctx.thinking,
  }),
};

export class Qwen35Format extends FamilyFormat {
  constructor() {
    super(QWEN35);
  }
}
