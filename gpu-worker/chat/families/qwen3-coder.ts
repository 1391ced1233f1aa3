/**
 * Qwen3-Coder (and Qwen3.5+, which reason in `<think>\n…\n</think>\n\n`) as its chat template
 * renders it: ChatML with XML tool calls
 *   <|im_start|>assistant\n<tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n</function>\n</tool_call><|im_end|>\n
 *   <|im_start|>user\n<tool_response>\n{result}\n</tool_response>\n<|im_end|>\n
 * Parameter values are read and written by the tool's JSON-schema type: strings raw, other values
 * as JSON (the template prints them with Python's `str`; JSON is what the model reads back the
 * same way). Thinking is offered only when the model's template knows `<think>` (Qwen3.5+).
 */
import type { Conversation, Message, ToolDefinition } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { contextText, type Part, toolInputText, toolResultText } from "../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../engine/family.ts";
import { MAX_PARALLEL_CALLS, type ToolCallMarkup } from "../grammar/tool-grammar.ts";
import { type XmlParameterMarkup, xmlArgumentsGrammar, xmlArgumentsText } from "../grammar/xml-grammar.ts";
import { canonicalJson, isPlainObject, tryParseJson } from "../json-text.ts";
import type { SpanReading, ToolSchemas } from "../parse/call-stream.ts";
import { TaggedOutputParser } from "../parse/tagged-parser.ts";
import { parameterValueText, type XmlParameter, xmlArgumentsCall } from "../parse/xml-arguments.ts";
import { CHATML_CONTROL_TOKENS, chatMlSystem, IM_END, IM_START } from "./hermes.ts";

const DEFAULT_SYSTEM = "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks.";
const TOOLS_OUTRO =
  "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n" +
  "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n" +
  "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n" +
  "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n" +
  "- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n" +
  "- Required parameters MUST be specified\n" +
  "- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n" +
  "- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n" +
  "</IMPORTANT>";

const PARAMETER: XmlParameterMarkup = {
  family: "qwen3-coder",
  open: (key) => `<parameter=${key}>\n`,
  close: "\n</parameter>\n",
  reserved: [
    ...CHATML_CONTROL_TOKENS,
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "<think>",
    "</think>",
  ],
};

const CODER_TOOL_MARKUP: ToolCallMarkup = {
  thinkingClose: "\n</think>\n\n",
  blockOpen: "",
  blockClose: "",
  separator: "\n",
  callOpen: (name) => `<tool_call>\n<function=${name}>\n`,
  callClose: "</function>\n</tool_call>",
  argumentsGrammar: (json, tool) => xmlArgumentsGrammar(PARAMETER, json, tool),
  stringsWithoutAngle: true,
  argumentsText: (argumentsJson) => xmlArgumentsText(PARAMETER, argumentsJson),
};

const requiredList = (list: unknown): string =>
  Array.isArray(list) && list.length > 0
    ? `\n<required>[${list.map((item) => (typeof item === "string" ? `\`${item}\`` : String(item))).join(", ")}]</required>`
    : "";

/** A tool as the template lists it: name, description, one `<parameter>` per property. */
function toolText(tool: ToolDefinition): string {
  const schema = tryParseJson(tool.inputSchemaJson)?.value;
  const s = isPlainObject(schema) ? schema : {};
  const properties = isPlainObject(s.properties) ? s.properties : {};
  let out = `\n<function>\n<name>${tool.name}</name>\n<description>${tool.description.trim()}</description>\n<parameters>`;
  for (const [name, field] of Object.entries(properties)) {
    const f = isPlainObject(field) ? field : {};
    out += `\n<parameter>\n<name>${name}</name>`;
    if (f.type !== undefined) out += `\n<type>${typeof f.type === "string" ? f.type : canonicalJson(f.type)}</type>`;
    if (typeof f.description === "string") out += `\n<description>${f.description.trim()}</description>`;
    for (const [key, value] of Object.entries(f)) {
      if (["type", "description", "enum", "required"].includes(key) || value === null) continue;
      const tag = key.replace(/[- ]/g, "_").replace(/\$/g, "");
      out += `\n<${tag}>${isPlainObject(value) ? canonicalJson(value) : parameterValueText(value)}</${tag}>`;
    }
    out += `${requiredList(f.required)}\n</parameter>`;
  }
  return `${out}${requiredList(s.required)}\n</parameters>\n</function>`;
}

function header(conversation: Conversation): Part[] {
  const system = conversation.system.join("\n\n");
  const tools = conversation.tools;
  if (system === "" && tools.length === 0) return [];
  const parts: Part[] = [{ template: `${IM_START}system\n` }, { content: system === "" ? DEFAULT_SYSTEM : system }];
  if (tools.length > 0) {
    parts.push({ template: "\n\nYou have access to the following functions:\n\n<tools>" });
    for (const tool of tools) parts.push({ content: toolText(tool) });
    parts.push({ template: TOOLS_OUTRO });
  }
  parts.push({ template: `${IM_END}\n` });
  return parts;
}

function user(message: Message): Part[] {
  const parts: Part[] = [{ template: `${IM_START}user\n` }];
  let results = false;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      results = true;
      parts.push(
        { template: "<tool_response>\n" },
        { content: toolResultText(b.value) },
        { template: "\n</tool_response>\n" },
      );
    } else {
      const text = contextText(block);
      if (text !== undefined) parts.push({ template: results ? "\n" : "" }, { content: text });
    }
  }
  return [...parts, { template: `${IM_END}\n` }];
}

function callParts(name: string, inputJson: string): Part[] {
  const parsed = tryParseJson(toolInputText(inputJson));
  const args = parsed !== undefined && isPlainObject(parsed.value) ? parsed.value : {};
  const parts: Part[] = [{ template: "<tool_call>\n<function=" }, { content: name }, { template: ">\n" }];
  for (const [key, value] of Object.entries(args))
    parts.push(
      { template: "<parameter=" },
      { content: key },
      { template: ">\n" },
      { content: parameterValueText(value) },
      { template: PARAMETER.close },
    );
  return [...parts, { template: CODER_TOOL_MARKUP.callClose }];
}

/**
 * After the `<|im_start|>assistant\n` header: thinking, text, then calls ("\n\n" after text, "\n"
 * between). A model that does not reason has no place for thinking: its blocks are not rendered.
 */
function assistantBody(message: Message, thinking: boolean): Part[] {
  const parts: Part[] = [];
  let calls = 0;
  let text = false;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") {
      if (thinking && b.value.thinking !== "")
        parts.push({ template: "<think>\n" }, { content: b.value.thinking }, { template: "\n</think>\n\n" });
    } else if (b.case === "toolUse") {
      parts.push({ template: calls > 0 ? "\n" : text ? "\n\n" : "" }, ...callParts(b.value.name, b.value.inputJson));
      calls++;
    } else {
      const value = contextText(block);
      if (value === undefined || value === "") continue;
      parts.push({ template: text || calls > 0 ? "\n\n" : "" }, { content: value });
      text = true;
    }
  }
  return parts.filter((p) => !("template" in p) || p.template !== "");
}

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

/** Reads `<tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>`. */
export function readCoderSpan(span: string, tools: ToolSchemas): SpanReading {
  const close = span.indexOf(CLOSE, OPEN.length);
  const end = close < 0 ? undefined : close + CLOSE.length;
  const body = close < 0 ? span : span.slice(0, close);
  const head = /^<tool_call>\s*<function=([^>\n]+)>\n?/.exec(body);
  if (head === null) return { calls: [], end };
  const parameters: XmlParameter[] = [];
  let at = head[0].length;
  let broken = false;
  for (;;) {
    while (at < body.length && /\s/.test(body[at] as string)) at++;
    const rest = body.slice(at);
    if (rest === "") break;
    if (rest.startsWith("</function>")) {
      broken = end !== undefined && rest.slice("</function>".length).trim() !== "";
      break;
    }
    const open = /^<parameter=([^>\n]+)>\n?/.exec(rest);
    if (open === null) {
      broken = end !== undefined; // still arriving until the span closes
      break;
    }
    const valueStart = at + open[0].length;
    const valueEnd = body.indexOf("</parameter>", valueStart);
    if (valueEnd < 0) {
      parameters.push({ key: (open[1] as string).trim(), value: body.slice(valueStart), complete: false });
      broken = end !== undefined;
      break;
    }
    parameters.push({
      key: (open[1] as string).trim(),
      value: body.slice(valueStart, valueEnd).replace(/\n$/, ""),
      complete: true,
    });
    at = valueEnd + "</parameter>".length;
  }
  const done = end !== undefined && !broken && parameters.every((p) => p.complete);
  const call = xmlArgumentsCall(tools, (head[1] as string).trim(), parameters, PARAMETER.close.trimEnd(), {
    done,
    broken,
    rawEnd: end,
  });
  return { calls: [call], end };
}

function spec(thinking: boolean): FamilySpec {
  return {
    name: "qwen3-coder",
    controlTokens: CHATML_CONTROL_TOKENS,
    turnControlTokens: [],
    endOfTurnText: IM_END,
    endOfGenerationTexts: [IM_END, "<|endoftext|>"],
    maxCallsPerTurn: MAX_PARALLEL_CALLS,
    markup: CODER_TOOL_MARKUP,
    header,
    system: chatMlSystem,
    user,
    assistantHeader: () => `${IM_START}assistant\n`,
    assistantBody: (message) => assistantBody(message, thinking),
    assistantClose: () => `${IM_END}\n`,
    generation: (ctx) => ({
      header: `${IM_START}assistant\n`,
      prefill: thinking && ctx.thinking ? "<think>\n" : "",
      thinkingOpen: thinking && ctx.thinking,
    }),
    parser: (options) =>
      new TaggedOutputParser({ thinkClose: "</think>", spanOpen: OPEN, readSpan: readCoderSpan }, options),
  };
}

export class Qwen3CoderFormat extends FamilyFormat {
  /** `thinking`: the model reasons in `<think>` (Qwen3.5+); Qwen3-Coder itself does not. */
  constructor(options: { thinking: boolean } = { thinking: false }) {
    super(spec(options.thinking));
  }
}
