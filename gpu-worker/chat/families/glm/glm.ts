/**
 * GLM-4.5 / 4.6 / 4.7 as their chat template renders them:
 *   [gMASK]<sop><|system|>\n# Tools ... <tools>\n{tool json}\n</tools> ...<|system|>\n{system}
 *   <|user|>\n{text}                              ("/nothink", one control token, appended when thinking is off)
 *   <|assistant|>\n<think>{thinking}</think>\n{text}\n<tool_call>NAME\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>
 *   <|observation|>\n<tool_response>\n{result}\n</tool_response>
 *   <|assistant|>                                 (thinking on: the model opens "\n<think>" itself)
 *   <|assistant|>\n<think></think>                (thinking off)
 * No token closes an assistant turn: the model ends it by sampling the next role (`<|user|>`,
 * `<|observation|>`). Argument values are raw text for string parameters, JSON otherwise. The
 * template drops the reasoning of turns before the last user message; Frontier keeps it.
 */
import type { Conversation, Message } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
import { contextText, type Part, systemMessageText, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import { hermesToolJson } from "../qwen/hermes.ts";

const USER = "<|user|>";
export const OBSERVATION = "<|observation|>";
/** One control token in GLM's vocabulary, as `<|user|>` is: rendered as text it would cost 1-2 extra tokens a turn. */
const NO_THINK = "/nothink";
const TURN_CONTROL_TOKENS = [
  "<think>",
  "</think>",
  "<tool_call>",
  "</tool_call>",
  "<arg_key>",
  "</arg_key>",
  "<arg_value>",
  "</arg_value>",
];
export const CONTROL_TOKENS = [
  "[gMASK]",
  "<sop>",
  "<|system|>",
  USER,
  "<|assistant|>",
  OBSERVATION,
  "<|endoftext|>",
  "<tool_response>",
  "</tool_response>",
  NO_THINK,
  ...TURN_CONTROL_TOKENS,
];

export const TOOLS_INTRO =
  "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
const TOOLS_OUTRO =
  "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n" +
  "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n" +
  "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";

/** `\n<tool_call>NAME\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>`, calls back to back. */
export const GLM_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "</think>", modelOpens: true },
  separator: "",
  call: { open: "\n<tool_call>", close: "\n</tool_call>" },
  arguments: {
    kind: "xml",
    key: { open: "\n<arg_key>", close: "</arg_key>\n<arg_value>" },
    valueClose: "</arg_value>",
    reserved: CONTROL_TOKENS,
  },
};

/** The prompt's head: tools (`outro` says the call layout), then the system text after `systemOpen`. */
export function glmHeader(conversation: Conversation, outro: string, systemOpen: string): Part[] {
  const parts: Part[] = [{ template: "[gMASK]<sop>" }];
  if (conversation.tools.length > 0) {
    parts.push({ template: TOOLS_INTRO });
    for (const tool of conversation.tools) parts.push({ content: hermesToolJson(tool) }, { template: "\n" });
    parts.push({ template: outro });
  }
  const system = conversation.system.join("\n\n");
  if (system !== "") parts.push({ template: systemOpen }, { content: system });
  return parts;
}

/** How a user turn's pieces are laid out (GLM-4.5/4.6 put newlines around them; 4.7 does not). */
export interface GlmUserLayout {
  toolResponseOpen: string;
  toolResponseClose: string;
  userOpen: string;
  /** Between the text blocks of one message. */
  textJoin: string;
  /** Thinking off is written as `/nothink` after the user's text (4.7 prefills `</think>` instead). */
  noThinkToken: boolean;
}

/** A user message: its tool results after one `<|observation|>`, then its text after the user token. */
export function glmUserBody(message: Message, thinking: boolean, layout: GlmUserLayout): Part[] {
  const parts: Part[] = [];
  const texts: string[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      if (parts.length === 0) parts.push({ template: OBSERVATION });
      parts.push(
        { template: layout.toolResponseOpen },
        { content: toolResultText(b.value) },
        { template: layout.toolResponseClose },
      );
    } else {
      const value = contextText(block);
      if (value !== undefined) texts.push(value);
    }
  }
  if (texts.length === 0) return parts;
  const text = texts.join(layout.textJoin);
  parts.push({ template: layout.userOpen }, { content: text });
  if (layout.noThinkToken && !thinking && !text.endsWith(NO_THINK)) parts.push({ template: NO_THINK });
  return parts;
}

const USER_LAYOUT: GlmUserLayout = {
  toolResponseOpen: "\n<tool_response>\n",
  toolResponseClose: "\n</tool_response>",
  userOpen: `${USER}\n`,
  textJoin: "",
  noThinkToken: true,
};

/** How a past assistant turn's pieces are laid out (GLM-4.5/4.6 put newlines between them; 4.7 does not). */
export interface GlmAssistantLayout {
  calls: CallFormat;
  /** A turn without reasoning. */
  noThinking: string;
  thinkingOpen: string;
  /** Before each text block. */
  beforeText: string;
}

export function glmAssistantBody(message: Message, layout: GlmAssistantLayout): Part[] {
  const thinking = message.content
    .flatMap((c) => (c.block.case === "thinking" ? [c.block.value.thinking] : []))
    .join("");
  const parts: Part[] =
    thinking === ""
      ? [{ template: layout.noThinking }]
      : [{ template: layout.thinkingOpen }, { content: thinking }, { template: "</think>" }];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") continue;
    if (b.case === "toolUse") parts.push(...callParts(layout.calls, b.value.name, b.value.inputJson));
    else {
      const value = contextText(block);
      if (value === undefined || value === "") continue;
      if (layout.beforeText !== "") parts.push({ template: layout.beforeText });
      parts.push({ content: value });
    }
  }
  return parts;
}

const ASSISTANT_LAYOUT: GlmAssistantLayout = {
  calls: GLM_CALLS,
  noThinking: "\n<think></think>",
  thinkingOpen: "\n<think>",
  beforeText: "\n",
};

/** GLM-4.5/4.6; `glm47.ts` is a delta over it. */
export const GLM: FamilySpec = {
  name: "glm",
  tokens: {
    control: CONTROL_TOKENS,
    turn: TURN_CONTROL_TOKENS,
    endOfTurn: USER,
    endOfGeneration: [USER, OBSERVATION, "<|endoftext|>"],
  },
  calls: GLM_CALLS,
  header: (conversation) => glmHeader(conversation, TOOLS_OUTRO, "<|system|>\n"),
  system: (message) => [{ template: "<|system|>\n" }, { content: systemMessageText(message) }],
  user: (message, ctx) => glmUserBody(message, ctx.thinking, USER_LAYOUT),
  assistantHeader: () => "<|assistant|>",
  assistantBody: (message) => glmAssistantBody(message, ASSISTANT_LAYOUT),
  assistantClose: () => "",
  generation: (ctx) => ({
    header: "<|assistant|>",
    prefill: ctx.thinking ? "" : "\n<think></think>",
    thinkingOpen: false,
  }),
};

export class GlmFormat extends FamilyFormat {
  constructor() {
    super(GLM);
  }
}
