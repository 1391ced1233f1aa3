/**
 * GLM-4.7 (and GLM-5, whose template has the same layout) as its chat template renders it: GLM's
 * tokens and XML arguments (`glm.ts`) with no whitespace between the pieces of a turn:
 *   [gMASK]<sop><|system|>\n# Tools ... <tools>\n{tool json}\n</tools> ...<|system|>{system}
 *   <|user|>{text}                                       (no "/nothink": thinking off is the prefill)
 *   <|assistant|><think>{thinking}</think>{text}<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>
 *   <|assistant|></think>{text}                          (a turn without reasoning)
 *   <|observation|><tool_response>{result}</tool_response>
 *   <|assistant|><think>                                 (thinking on, the default: sampling starts inside it)
 *   <|assistant|></think>                                (thinking off)
 * The template drops the reasoning of turns before the last user message unless `clear_thinking`
 * is false; Frontier keeps it (the live KV holds it), which is the template with `clear_thinking: false`.
 */
import type { Conversation, Message } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
import { contextText, type Part, systemMessageText, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import { hermesToolJson } from "../qwen/hermes.ts";
import { CONTROL_TOKENS, GLM, GLM_CALLS, OBSERVATION, TOOLS_INTRO } from "./glm.ts";

const TOOLS_OUTRO =
  "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n" +
  "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>{arg-value-1}</arg_value>" +
  "<arg_key>{arg-key-2}</arg_key><arg_value>{arg-value-2}</arg_value>...</tool_call>";

/** `<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`, calls back to back; thinking prefilled. */
const GLM47_CALLS: CallFormat = {
  ...GLM_CALLS,
  thinking: { ...GLM_CALLS.thinking, modelOpens: false },
  call: { open: "<tool_call>", close: "</tool_call>" },
  arguments: {
    kind: "xml",
    key: { open: "<arg_key>", close: "</arg_key><arg_value>" },
    valueClose: "</arg_value>",
    reserved: CONTROL_TOKENS,
  },
};

function header(conversation: Conversation): Part[] {
  const parts: Part[] = [{ template: "[gMASK]<sop>" }];
  if (conversation.tools.length > 0) {
    parts.push({ template: TOOLS_INTRO });
    for (const tool of conversation.tools) parts.push({ content: hermesToolJson(tool) }, { template: "\n" });
    parts.push({ template: TOOLS_OUTRO });
  }
  const system = conversation.system.join("\n\n");
  if (system !== "") parts.push({ template: "<|system|>" }, { content: system });
  return parts;
}

function user(message: Message): Part[] {
  const parts: Part[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      if (parts.length === 0) parts.push({ template: OBSERVATION });
      parts.push(
        { template: "<tool_response>" },
        { content: toolResultText(b.value) },
        { template: "</tool_response>" },
      );
    } else {
      const text = contextText(block);
      if (text !== undefined) texts.push(text);
    }
  }
  if (texts.length > 0) parts.push({ template: "<|user|>" }, { content: texts.join("\n\n") });
  return parts;
}

function assistantBody(message: Message): Part[] {
  const thinking = message.content
    .flatMap((c) => (c.block.case === "thinking" ? [c.block.value.thinking] : []))
    .join("");
  const parts: Part[] =
    thinking === ""
      ? [{ template: "</think>" }]
      : [{ template: "<think>" }, { content: thinking }, { template: "</think>" }];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") continue;
    if (b.case === "toolUse") parts.push(...callParts(GLM47_CALLS, b.value.name, b.value.inputJson));
    else {
      const value = contextText(block);
      if (value !== undefined && value !== "") parts.push({ content: value });
    }
  }
  return parts;
}

const GLM47: FamilySpec = {
  ...GLM,
  name: "glm-4.7",
  calls: GLM47_CALLS,
  header,
  system: (message) => [{ template: "<|system|>" }, { content: systemMessageText(message) }],
  user,
  assistantBody,
  generation: (ctx) => ({
    header: "<|assistant|>",
    prefill: ctx.thinking ? "<think>" : "</think>",
    thinkingOpen: ctx.thinking,
  }),
};

export class Glm47Format extends FamilyFormat {
  constructor() {
    super(GLM47);
  }
}
