/**
 * gpt-oss's harmony format as its chat template renders it:
 *   <|start|>system<|message|>{identity}\nKnowledge cutoff: …\nCurrent date: …\n\nReasoning: …\n\n# Valid channels: …<|end|>
 *   <|start|>developer<|message|># Instructions\n\n{system}\n\n# Tools\n\n## functions\n\nnamespace functions {…}<|end|>
 *   <|start|>user<|message|>{text}<|end|>
 *   <|start|>assistant<|channel|>analysis<|message|>{thinking}<|end|>
 *   <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{args}<|call|>
 *   <|start|>functions.NAME to=assistant<|channel|>commentary<|message|>"{result as a JSON string}"<|end|>
 *   <|start|>assistant<|channel|>final<|message|>{text}<|end|>      (sampled as …<|return|>)
 * The system block is fixed by configuration (`HarmonyOptions`): its date does not change per
 * request, so the prefix stays reusable. `<|call|>` ends a generation, so a turn makes one call.
 * Where the template rewrites history, Frontier's exact transcript wins: the template drops
 * analysis once a final answer follows, names every tool result after the latest call, and
 * ignores later system messages; Frontier keeps the analysis, names each result's own tool and
 * renders a later system message in place as a developer message.
 */
import type { Conversation, Message } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat } from "../../call-format.ts";
import { callParts } from "../../engine/call-markup.ts";
import { contextText, type Part, systemMessageText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec, type RenderContext } from "../../engine/family.ts";
import { type HarmonyMarkers, HarmonyOutputParser } from "./harmony-parser.ts";
import { harmonyToolNamespace } from "./harmony-tools.ts";

export interface HarmonyOptions {
  modelIdentity: string;
  knowledgeCutoff: string;
  /** YYYY-MM-DD, fixed for the worker's life (the template would print today's date). */
  currentDate: string;
  reasoningEffort: "low" | "medium" | "high";
}

export const HARMONY_DEFAULTS: HarmonyOptions = {
  modelIdentity: "You are ChatGPT, a large language model trained by OpenAI.",
  knowledgeCutoff: "2024-06",
  currentDate: new Date().toISOString().slice(0, 10),
  reasoningEffort: "medium",
};

/** The message structure's spellings, which the template writes and the parser reads. */
const MARKERS: HarmonyMarkers = {
  start: "<|start|>",
  end: "<|end|>",
  message: "<|message|>",
  channel: "<|channel|>",
  call: "<|call|>",
  return: "<|return|>",
  recipient: "to=",
  functions: "functions.",
  thinkingChannel: "analysis",
};
const { start: START, end: END, message: MESSAGE, channel: CHANNEL, call: CALL, return: RETURN } = MARKERS;
const TURN_CONTROL_TOKENS = [START, END, MESSAGE, CHANNEL, "<|constrain|>"];
const CONTROL_TOKENS = [...TURN_CONTROL_TOKENS, CALL, RETURN, "<|endoftext|>"];

/**
 * A call is a message to `functions.NAME` on the commentary channel, its body the arguments JSON;
 * `<|call|>` after it ends the generation, so a turn makes one call. Visible text is a message on
 * the final channel; thinking is the analysis channel (never forced open, so nothing to close).
 * The parser is hand-written (harmony-parser.ts): output is a run of channel messages, not tagged spans.
 */
const HARMONY_CALLS: CallFormat = {
  thinking: { open: `${CHANNEL}${MARKERS.thinkingChannel}${MESSAGE}`, close: END, forcedClose: "", modelOpens: true },
  separator: "",
  call: {
    open: ` ${MARKERS.recipient}${MARKERS.functions}`,
    afterName: `${CHANNEL}commentary json${MESSAGE}`,
    close: "",
  },
  arguments: { kind: "json" },
  textOpen: `${CHANNEL}final${MESSAGE}`,
  maxPerTurn: 1,
};

function header(options: HarmonyOptions, conversation: Conversation): Part[] {
  const tools = conversation.tools;
  const system =
    `${options.modelIdentity}\nKnowledge cutoff: ${options.knowledgeCutoff}\nCurrent date: ${options.currentDate}\n\n` +
    `Reasoning: ${options.reasoningEffort}\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.` +
    (tools.length > 0 ? "\nCalls to these tools must go to the commentary channel: 'functions'." : "");
  const parts: Part[] = [{ template: `${START}system${MESSAGE}` }, { content: system }, { template: END }];
  const instructions = conversation.system.join("\n\n");
  if (instructions === "" && tools.length === 0) return parts;
  parts.push({ template: `${START}developer${MESSAGE}` });
  if (instructions !== "")
    parts.push({ template: "# Instructions\n\n" }, { content: instructions }, { template: "\n\n" });
  if (tools.length > 0) parts.push({ template: "# Tools\n\n" }, { content: harmonyToolNamespace(tools) });
  return [...parts, { template: END }];
}

function user(message: Message, ctx: RenderContext): Part[] {
  const parts: Part[] = [];
  const text: string[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      const name = ctx.toolNames.get(b.value.toolUseId) ?? "unknown";
      const content = b.value.isError ? `[error] ${b.value.content}` : b.value.content;
      parts.push(
        { template: `${START}${MARKERS.functions}` },
        { content: name },
        { template: ` ${MARKERS.recipient}assistant${CHANNEL}commentary${MESSAGE}` },
        { content: JSON.stringify(content) },
        { template: END },
      );
    } else {
      const value = contextText(block);
      if (value !== undefined) text.push(value);
    }
  }
  if (text.length > 0)
    parts.push({ template: `${START}user${MESSAGE}` }, { content: text.join("\n\n") }, { template: END });
  return parts;
}

type Item = { parts: Part[]; end: string };

/** The messages of an assistant turn; the first one's `<|start|>assistant` is the turn header. */
function items(message: Message): Item[] {
  const out: Item[] = [];
  const hasCalls = message.content.some((c) => c.block.case === "toolUse");
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") {
      if (b.value.thinking !== "")
        out.push({ parts: [{ template: HARMONY_CALLS.thinking.open }, { content: b.value.thinking }], end: END });
    } else if (b.case === "toolUse") {
      out.push({ parts: callParts(HARMONY_CALLS, b.value.name, b.value.inputJson), end: CALL });
    } else {
      const value = contextText(block);
      if (value === undefined || value === "") continue;
      const channel = hasCalls ? "commentary" : "final";
      out.push({ parts: [{ template: `${CHANNEL}${channel}${MESSAGE}` }, { content: value }], end: END });
    }
  }
  return out;
}

function spec(options: HarmonyOptions): FamilySpec {
  return {
    name: "harmony",
    tokens: { control: CONTROL_TOKENS, turn: TURN_CONTROL_TOKENS, endOfTurn: RETURN, endOfGeneration: [RETURN, CALL] },
    calls: HARMONY_CALLS,
    header: (conversation) => header(options, conversation),
    system: (message) => [
      { template: `${START}developer${MESSAGE}` },
      { content: systemMessageText(message) },
      { template: END },
    ],
    user,
    assistantHeader: () => `${START}assistant`,
    assistantBody: (message) =>
      items(message).flatMap((item, i, all) => [
        ...(i === 0 ? [] : [{ template: `${all[i - 1]?.end}${START}assistant` }]),
        ...item.parts,
      ]),
    // History closes the last message as the template does: a call with <|call|>, any other with <|end|>.
    assistantClose: (message) => (items(message).at(-1)?.end === CALL ? CALL : END),
    generation: () => ({ header: `${START}assistant`, prefill: "", thinkingOpen: false }),
    parser: (parserOptions) => new HarmonyOutputParser(parserOptions, MARKERS),
  };
}

export class HarmonyFormat extends FamilyFormat {
  constructor(options: Partial<HarmonyOptions> = {}) {
    super(spec({ ...HARMONY_DEFAULTS, ...options }));
  }
}
