/**
 * GLM-4.5 / 4.6 / 4.7 as their chat template renders them:
 *   [gMASK]<sop><|system|>\n# Tools ... <tools>\n{tool json}\n</tools> ...<|system|>\n{system}
 *   <|user|>\n{text}                              ("/nothink" appended when thinking is off)
 *   <|assistant|>\n<think>{thinking}</think>\n{text}\n<tool_call>NAME\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>
 *   <|observation|>\n<tool_response>\n{result}\n</tool_response>
 *   <|assistant|>                                 (thinking on: the model opens "\n<think>" itself)
 *   <|assistant|>\n<think></think>                (thinking off)
 * No token closes an assistant turn: the model ends it by sampling the next role (`<|user|>`,
 * `<|observation|>`). Argument values are raw text for string parameters, JSON otherwise. The
 * template drops the reasoning of turns before the last user message; Frontier keeps it.
 */
import type { Conversation, Message } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { contextText, type Part, systemMessageText, toolInputText, toolResultText } from "../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../engine/family.ts";
import { MAX_PARALLEL_CALLS, type ToolCallMarkup } from "../grammar/tool-grammar.ts";
import { type XmlParameterMarkup, xmlArgumentsGrammar, xmlArgumentsText } from "../grammar/xml-grammar.ts";
import { isPlainObject, tryParseJson } from "../json-text.ts";
import type { SpanReading, ToolSchemas } from "../parse/call-stream.ts";
import { TaggedOutputParser } from "../parse/tagged-parser.ts";
import { parameterValueText, type XmlParameter, xmlArgumentsCall } from "../parse/xml-arguments.ts";
import { hermesToolJson } from "./hermes.ts";

const USER = "<|user|>";
const OBSERVATION = "<|observation|>";
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
const CONTROL_TOKENS = [
  "[gMASK]",
  "<sop>",
  "<|system|>",
  USER,
  "<|assistant|>",
  OBSERVATION,
  "<|endoftext|>",
  "<tool_response>",
  "</tool_response>",
  ...TURN_CONTROL_TOKENS,
];

const TOOLS_INTRO =
  "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
  "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
const TOOLS_OUTRO =
  "</tools>\n\nFor each function call, output the function name and arguments within the following XML format:\n" +
  "<tool_call>{function-name}\n<arg_key>{arg-key-1}</arg_key>\n<arg_value>{arg-value-1}</arg_value>\n" +
  "<arg_key>{arg-key-2}</arg_key>\n<arg_value>{arg-value-2}</arg_value>\n...\n</tool_call>";

const ARGUMENT: XmlParameterMarkup = {
  family: "glm",
  open: (key) => `\n<arg_key>${key}</arg_key>\n<arg_value>`,
  close: "</arg_value>",
  reserved: CONTROL_TOKENS,
};

const GLM_TOOL_MARKUP: ToolCallMarkup = {
  thinkingClose: "</think>",
  blockOpen: "",
  blockClose: "",
  separator: "",
  callOpen: (name) => `\n<tool_call>${name}`,
  callClose: "\n</tool_call>",
  argumentsGrammar: (json, tool) => xmlArgumentsGrammar(ARGUMENT, json, tool),
  stringsWithoutAngle: true,
  argumentsText: (argumentsJson) => xmlArgumentsText(ARGUMENT, argumentsJson),
};

function header(conversation: Conversation): Part[] {
  const parts: Part[] = [{ template: "[gMASK]<sop>" }];
  if (conversation.tools.length > 0) {
    parts.push({ template: TOOLS_INTRO });
    for (const tool of conversation.tools) parts.push({ content: hermesToolJson(tool) }, { template: "\n" });
    parts.push({ template: TOOLS_OUTRO });
  }
  const system = conversation.system.join("\n\n");
  if (system !== "") parts.push({ template: "<|system|>\n" }, { content: system });
  return parts;
}

function user(message: Message, thinking: boolean): Part[] {
  const parts: Part[] = [];
  let text: string | undefined;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      if (parts.length === 0) parts.push({ template: OBSERVATION });
      parts.push(
        { template: "\n<tool_response>\n" },
        { content: toolResultText(b.value) },
        { template: "\n</tool_response>" },
      );
    } else {
      const value = contextText(block);
      if (value !== undefined) text = text === undefined ? value : `${text}${value}`;
    }
  }
  if (text !== undefined) {
    parts.push({ template: `${USER}\n` }, { content: text });
    if (!thinking && !text.endsWith("/nothink")) parts.push({ template: "/nothink" });
  }
  return parts;
}

function callParts(name: string, inputJson: string): Part[] {
  const parsed = tryParseJson(toolInputText(inputJson));
  const args = parsed !== undefined && isPlainObject(parsed.value) ? parsed.value : {};
  const parts: Part[] = [{ template: "\n<tool_call>" }, { content: name }];
  for (const [key, value] of Object.entries(args))
    parts.push(
      { template: "\n<arg_key>" },
      { content: key },
      { template: "</arg_key>\n<arg_value>" },
      { content: parameterValueText(value) },
      { template: ARGUMENT.close },
    );
  return [...parts, { template: GLM_TOOL_MARKUP.callClose }];
}

function assistantBody(message: Message): Part[] {
  const thinking = message.content
    .flatMap((c) => (c.block.case === "thinking" ? [c.block.value.thinking] : []))
    .join("");
  const parts: Part[] =
    thinking === ""
      ? [{ template: "\n<think></think>" }]
      : [{ template: "\n<think>" }, { content: thinking }, { template: "</think>" }];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") continue;
    if (b.case === "toolUse") parts.push(...callParts(b.value.name, b.value.inputJson));
    else {
      const value = contextText(block);
      if (value !== undefined && value !== "") parts.push({ template: "\n" }, { content: value });
    }
  }
  return parts;
}

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

/** Reads `<tool_call>NAME\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>…\n</tool_call>`. */
function readGlmSpan(span: string, tools: ToolSchemas): SpanReading {
  const close = span.indexOf(CLOSE, OPEN.length);
  const end = close < 0 ? undefined : close + CLOSE.length;
  const body = close < 0 ? span : span.slice(0, close);
  const head = /^<tool_call>\s*([^\n<]+?)\s*(?=\n|<|$)/.exec(body);
  if (head === null || (end === undefined && head[0].length === body.length)) return { calls: [], end };
  const parameters: XmlParameter[] = [];
  let at = head[0].length;
  let broken = false;
  for (;;) {
    while (at < body.length && /\s/.test(body[at] as string)) at++;
    const rest = body.slice(at);
    if (rest === "") break;
    const open = /^<arg_key>([^<]*)<\/arg_key>\s*<arg_value>/.exec(rest);
    if (open === null) {
      broken = end !== undefined; // still arriving until the span closes
      break;
    }
    const valueStart = at + open[0].length;
    const valueEnd = body.indexOf(ARGUMENT.close, valueStart);
    const key = (open[1] as string).trim();
    if (valueEnd < 0) {
      parameters.push({ key, value: body.slice(valueStart), complete: false });
      broken = end !== undefined;
      break;
    }
    parameters.push({ key, value: body.slice(valueStart, valueEnd), complete: true });
    at = valueEnd + ARGUMENT.close.length;
  }
  const done = end !== undefined && !broken && parameters.every((p) => p.complete);
  const call = xmlArgumentsCall(tools, (head[1] as string).trim(), parameters, ARGUMENT.close, {
    done,
    broken,
    rawEnd: end,
  });
  return { calls: [call], end };
}

const GLM: FamilySpec = {
  name: "glm",
  controlTokens: CONTROL_TOKENS,
  turnControlTokens: TURN_CONTROL_TOKENS,
  endOfTurnText: USER,
  endOfGenerationTexts: [USER, OBSERVATION, "<|endoftext|>"],
  maxCallsPerTurn: MAX_PARALLEL_CALLS,
  markup: GLM_TOOL_MARKUP,
  header,
  system: (message) => [{ template: "<|system|>\n" }, { content: systemMessageText(message) }],
  user: (message, ctx) => user(message, ctx.thinking),
  assistantHeader: () => "<|assistant|>",
  assistantBody,
  assistantClose: () => "",
  generation: (ctx) => ({
    header: "<|assistant|>",
    prefill: ctx.thinking ? "" : "\n<think></think>",
    thinkingOpen: false,
  }),
  parser: (options) =>
    new TaggedOutputParser(
      { thinkOpen: "<think>", thinkClose: "</think>", spanOpen: OPEN, readSpan: readGlmSpan },
      options,
    ),
};

export class GlmFormat extends FamilyFormat {
  constructor() {
    super(GLM);
  }
}
