/**
 * Qwen3-Coder as its chat template renders it: ChatML with XML tool calls
 *   <|im_start|>assistant\n<tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n</function>\n</tool_call><|im_end|>\n
 *   <|im_start|>user\n<tool_response>\n{result}\n</tool_response>\n<|im_end|>\n
 * Parameter values are read and written by the tool's JSON-schema type: strings raw, other values
 * as JSON (the template prints them with Python's `str`; JSON is what the model reads back the
 * same way). Thinking is offered only when the model's template knows `<think>` (a coder-style
 * template that reasons but is not Qwen3.5's); Qwen3.5/3.6 are their own family (`qwen35.ts`).
 */
import type { Conversation, Message, ToolDefinition } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
import { contextText, type Part, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import { canonicalJson, isPlainObject, tryParseJson } from "../../json-text.ts";
import { parameterValueText } from "../../parse/xml-arguments.ts";
import { CHATML_CONTROL_TOKENS, CHATML_TOKENS, chatMlSystem, IM_END, IM_START } from "./hermes.ts";

const DEFAULT_SYSTEM = "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks.";
/** After the tool list: the call format and the reminder (Qwen3.5's template writes the same text). */
export const CODER_TOOLS_OUTRO =
  "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n" +
  "<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n" +
  "<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n" +
  "</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n" +
  "- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n" +
  "- Required parameters MUST be specified\n" +
  "- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n" +
  "- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls\n" +
  "</IMPORTANT>";

/** `<tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n</function>\n</tool_call>`, one per line. */
export const CODER_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "\n</think>\n\n", modelOpens: false },
  separator: "\n",
  call: { open: "<tool_call>", beforeName: "\n<function=", afterName: ">\n", close: "</function>\n</tool_call>" },
  arguments: {
    kind: "xml",
    key: { open: "<parameter=", close: ">\n" },
    valueClose: "\n</parameter>\n",
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
  },
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
    parts.push({ template: CODER_TOOLS_OUTRO });
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

/**
 * After the `<|im_start|>assistant\n` header: thinking, text, then calls ("\n\n" after text, "\n"
 * between). A model that does not reason has no place for thinking: its blocks are not rendered.
 */
export function coderAssistantBody(message: Message, thinking: boolean): Part[] {
  const parts: Part[] = [];
  let calls = 0;
  let text = false;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") {
      if (thinking && b.value.thinking !== "")
        parts.push({ template: "<think>\n" }, { content: b.value.thinking }, { template: "\n</think>\n\n" });
    } else if (b.case === "toolUse") {
      parts.push(
        { template: calls > 0 ? "\n" : text ? "\n\n" : "" },
        ...callParts(CODER_CALLS, b.value.name, b.value.inputJson),
      );
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

/** The Qwen3-Coder family; `qwen3.5.ts` is a delta over it. */
export function coderSpec(thinking: boolean): FamilySpec {
  return {
    name: "qwen3-coder",
    tokens: CHATML_TOKENS,
    calls: CODER_CALLS,
    header,
    system: chatMlSystem,
    user,
    assistantHeader: () => `${IM_START}assistant\n`,
    assistantBody: (message) => coderAssistantBody(message, thinking),
    assistantClose: () => `${IM_END}\n`,
    generation: (ctx) => ({
      header: `${IM_START}assistant\n`,
      prefill: thinking && ctx.thinking ? "<think>\n" : "",
      thinkingOpen: thinking && ctx.thinking,
    }),
  };
}

export class Qwen3CoderFormat extends FamilyFormat {
  /** `thinking`: the model reasons in `<think>` (Qwen3.5+); Qwen3-Coder itself does not. */
  constructor(options: { thinking: boolean } = { thinking: false }) {
    super(coderSpec(options.thinking));
  }
}
