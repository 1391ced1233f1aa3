/**
 * GLM-4.7 as its chat template renders it (GLM-5 is detected here by the same marker; its template
 * was not found to compare): GLM's tokens and XML arguments (`glm.ts`) with no whitespace between
 * the pieces of a turn:
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
import type { CallFormat } from "../../call-format.ts";
import { systemMessageText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import {
  CONTROL_TOKENS,
  GLM,
  GLM_CALLS,
  type GlmAssistantLayout,
  type GlmUserLayout,
  glmAssistantBody,
  glmHeader,
  glmUserBody,
} from "./glm.ts";

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

const USER_LAYOUT: GlmUserLayout = {
  toolResponseOpen: "<tool_response>",
  toolResponseClose: "</tool_response>",
  userOpen: "<|user|>",
  textJoin: "\n\n",
  noThinkToken: false,
};

const ASSISTANT_LAYOUT: GlmAssistantLayout = {
  calls: GLM47_CALLS,
  noThinking: "</think>",
  thinkingOpen: "<think>",
  beforeText: "",
};

const GLM47: FamilySpec = {
  ...GLM,
  name: "glm-4.7",
  calls: GLM47_CALLS,
  header: (conversation) => glmHeader(conversation, TOOLS_OUTRO, "<|system|>"),
  system: (message) => [{ template: "<|system|>" }, { content: systemMessageText(message) }],
  user: (message, ctx) => glmUserBody(message, ctx.thinking, USER_LAYOUT),
  assistantBody: (message) => glmAssistantBody(message, ASSISTANT_LAYOUT),
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
