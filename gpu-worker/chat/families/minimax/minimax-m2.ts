/**
 * MiniMax M2 / M2.x as its chat template renders it:
 *   ]~!b[]~b]system\n{system, or "You are a helpful assistant."}\n\n# Tools … <tools>\n<tool>{json}</tool>\n…</tools> …[e~[\n
 *   ]~b]user\n{text}[e~[\n
 *   ]~b]ai\n<think>\n{thinking}\n</think>\n\n{text}\n<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="k">v</parameter>\n</invoke>\n</minimax:tool_call>[e~[\n
 *   ]~b]tool\n<response>{result}</response>\n<response>…</response>[e~[\n
 *   ]~b]ai\n<think>\n                            (every generation opens thinking)
 * Interleaved thinking stays in the history: the template keeps the reasoning of every turn after
 * the last user message; Frontier keeps all of it (the KV holds it). Parameter values are raw text
 * for string parameters, JSON otherwise. A later system message renders in place (the template
 * ignores it).
 */
import { type Conversation, type Message, Role } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
import { contextText, type Part, systemMessageText, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import { hermesToolJson } from "../qwen/hermes.ts";

const BOS = "]~!b[";
const ROLE = "]~b]";
const END = "[e~[";
const CALLS_OPEN = "<minimax:tool_call>";
const CALLS_CLOSE = "</minimax:tool_call>";
const TURN_CONTROL_TOKENS = ["<think>", "</think>", CALLS_OPEN, CALLS_CLOSE];
/** The template's control tokens and M2's other role markers (minimax-m2's stand-in vocabulary holds them). */
export const MINIMAX_CONTROL_TOKENS = [BOS, ROLE, END, "]!p~[", "]!d~[", ...TURN_CONTROL_TOKENS] as const;

const DEFAULT_SYSTEM = "You are a helpful assistant.";
const TOOLS_INTRO =
  "\n\n# Tools\nYou may call one or more tools to assist with the user query.\n" +
  "Here are the tools available in JSONSchema format:\n\n<tools>\n";
const TOOLS_OUTRO =
  "</tools>\n\nWhen making tool calls, use XML format to invoke tools and pass parameters:\n\n" +
  `${CALLS_OPEN}\n<invoke name="tool-name-1">\n<parameter name="param-key-1">param-value-1</parameter>\n` +
  `<parameter name="param-key-2">param-value-2</parameter>\n...\n</invoke>\n${CALLS_CLOSE}`;

/** `\n<minimax:tool_call>\n` then `<invoke name="NAME">\n<parameter name="k">v</parameter>\n…</invoke>\n` per call. */
const MINIMAX_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "\n</think>\n\n", modelOpens: false },
  section: { open: `\n${CALLS_OPEN}\n`, close: CALLS_CLOSE },
  separator: "",
  call: { open: '<invoke name="', afterName: '">\n', close: "</invoke>\n" },
  arguments: {
    kind: "xml",
    key: { open: '<parameter name="', close: '">' },
    valueClose: "</parameter>\n",
    reserved: [...MINIMAX_CONTROL_TOKENS, "<invoke name=", "</invoke>", "<parameter name=", "</parameter>"],
  },
};

/** A tool as the template lists it: its `function` object as JSON (the `type` wrapper dropped). */
function toolJson(tool: Conversation["tools"][number]): string {
  const wrapped = hermesToolJson(tool);
  const prefix = '{"type": "function", "function": ';
  return wrapped.startsWith(prefix) ? wrapped.slice(prefix.length, -1) : wrapped;
}

function header(conversation: Conversation): Part[] {
  const system = conversation.system.join("\n\n");
  const parts: Part[] = [{ template: `${BOS}${ROLE}system\n` }];
  // A leading system message is the template's system prompt: only without one does the default stand in.
  if (system !== "" || conversation.messages[0]?.role !== Role.SYSTEM)
    parts.push({ content: system === "" ? DEFAULT_SYSTEM : system });
  if (conversation.tools.length > 0) {
    parts.push({ template: TOOLS_INTRO });
    for (const tool of conversation.tools)
      parts.push({ template: "<tool>" }, { content: toolJson(tool) }, { template: "</tool>\n" });
    parts.push({ template: TOOLS_OUTRO });
  }
  parts.push({ template: `${END}\n` });
  return parts;
}

function user(message: Message): Part[] {
  const parts: Part[] = [];
  const text: string[] = [];
  let results = 0;
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      if (results++ === 0) parts.push({ template: `${ROLE}tool` });
      parts.push({ template: "\n<response>" }, { content: toolResultText(b.value) }, { template: "</response>" });
    } else {
      const value = contextText(block);
      if (value !== undefined) text.push(value);
    }
  }
  if (results > 0) parts.push({ template: `${END}\n` });
  if (text.length > 0 || results === 0)
    parts.push({ template: `${ROLE}user\n` }, { content: text.join("\n\n") }, { template: `${END}\n` });
  return parts;
}

function assistantBody(message: Message): Part[] {
  const parts: Part[] = [];
  const calls: Part[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") {
      if (b.value.thinking !== "")
        parts.push({ template: "<think>\n" }, { content: b.value.thinking }, { template: "\n</think>\n\n" });
    } else if (b.case === "toolUse") calls.push(...callParts(MINIMAX_CALLS, b.value.name, b.value.inputJson));
    else {
      const value = contextText(block);
      if (value !== undefined) parts.push({ content: value });
    }
  }
  if (calls.length > 0) parts.push({ template: `\n${CALLS_OPEN}\n` }, ...calls, { template: CALLS_CLOSE });
  return parts;
}

const MINIMAX_M2: FamilySpec = {
  name: "minimax-m2",
  tokens: { control: MINIMAX_CONTROL_TOKENS, turn: TURN_CONTROL_TOKENS, endOfTurn: END, endOfGeneration: [END] },
  calls: MINIMAX_CALLS,
  header,
  system: (message) => [
    { template: `${ROLE}system\n` },
    { content: systemMessageText(message) },
    { template: `${END}\n` },
  ],
  user,
  assistantHeader: () => `${ROLE}ai\n`,
  assistantBody,
  assistantClose: () => `${END}\n`,
  generation: () => ({ header: `${ROLE}ai\n`, prefill: "<think>\n", thinkingOpen: true }),
};

export class MiniMaxM2Format extends FamilyFormat {
  constructor() {
    super(MINIMAX_M2);
  }
}
