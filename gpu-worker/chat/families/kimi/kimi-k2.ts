/**
 * Kimi K2 (Moonshot; K2-Thinking's template) as its chat template renders it:
 *   <|im_system|>tool_declare<|im_middle|>[{tool json}, …]<|im_end|>      (with tools)
 *   <|im_system|>system<|im_middle|>{system, or "You are Kimi, …"}<|im_end|>
 *   <|im_user|>user<|im_middle|>{text}<|im_end|>
 *   <|im_assistant|>assistant<|im_middle|><think>{thinking}</think>{text}<|tool_calls_section_begin|>
 *     <|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{args}<|tool_call_end|>…<|tool_calls_section_end|><|im_end|>
 *   <|im_system|>tool<|im_middle|>## Return of functions.NAME:IDX\n{result}<|im_end|>
 *   <|im_assistant|>assistant<|im_middle|>       (the model opens `<think>` itself)
 * The call ID the model sees is `functions.NAME:IDX`, kept exact in the history (kimi-calls.ts).
 * The template renders turns up to the last answer without their reasoning (`<think></think>`);
 * Frontier keeps the reasoning its KV holds. A forced call or answer starts with the empty
 * `<think></think>` the template writes for a turn without reasoning.
 */
import { type Conversation, type Message, Role } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { anyWord, type CallFormat, optional } from "../../call-format.ts";
import { contextText, type Part, systemMessageText, toolInputText, toolResultText } from "../../engine/content.ts";
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import type {
  AnswerGrammarOptions,
  FixedToolCall,
  RenderedPrompt,
  RenderOptions,
  ToolCallGrammarOptions,
} from "../../types.ts";
import { hermesToolJson } from "../qwen/hermes.ts";
import { CALL_ARGUMENTS, CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, modelCallIds } from "./kimi-calls.ts";
import { kimiAnswerGrammar, kimiFixedCallsGrammar, kimiToolCallGrammar } from "./kimi-grammar.ts";

const IM_END = "<|im_end|>";
const SYSTEM = "<|im_system|>";
const MIDDLE = "<|im_middle|>";
const ASSISTANT_HEADER = `<|im_assistant|>assistant${MIDDLE}`;
const DEFAULT_SYSTEM = "You are Kimi, an AI assistant created by Moonshot AI.";
const TURN_CONTROL_TOKENS = [CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_ARGUMENTS, CALL_END, "<think>", "</think>"];
/** The template's control tokens and the rest of K2's named specials (kimi-k2's stand-in vocabulary holds them all). */
export const KIMI_CONTROL_TOKENS = [
  "[BOS]",
  "[EOS]",
  "[EOT]",
  "[UNK]",
  "[PAD]",
  IM_END,
  "<|im_user|>",
  "<|im_assistant|>",
  SYSTEM,
  MIDDLE,
  "<|start_header_id|>",
  "<|end_header_id|>",
  "<|media_start|>",
  "<|media_content|>",
  "<|media_end|>",
  "<|media_pad|>",
  ...TURN_CONTROL_TOKENS,
] as const;

/** `<|tool_calls_section_begin|>` then `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{args}<|tool_call_end|>` back to back. */
const KIMI_CALLS: CallFormat = {
  thinking: { open: "<think>", close: "</think>", forcedClose: "<think></think>", modelOpens: true },
  section: { open: CALLS_BEGIN, close: CALLS_END },
  separator: "",
  // The index is written by the grammar (kimi-grammar.ts); any index, and a missing `functions.`, read back.
  call: {
    open: CALL_BEGIN,
    beforeName: [optional("functions.")],
    afterName: [":", anyWord("0"), CALL_ARGUMENTS],
    close: CALL_END,
  },
  arguments: { kind: "json" },
};

/** Per render: the model-visible ID of every call (set by `KimiK2Format.render` around the skeleton's render). */
interface RenderState {
  ids: ReadonlyMap<string, string>;
}

function header(conversation: Conversation): Part[] {
  const parts: Part[] = [];
  if (conversation.tools.length > 0) {
    parts.push({ template: `${SYSTEM}tool_declare${MIDDLE}` });
    const tools = conversation.tools.map((tool) => hermesToolJson(tool)).join(", ");
    parts.push({ content: `[${tools}]` }, { template: IM_END });
  }
  const system = conversation.system.join("\n\n");
  // The template's default stands in only when the first message is not a system message.
  const first = conversation.messages[0];
  if (system !== "" || first?.role !== Role.SYSTEM)
    parts.push(
      { template: `${SYSTEM}system${MIDDLE}` },
      { content: system === "" ? DEFAULT_SYSTEM : system },
      { template: IM_END },
    );
  return parts;
}

function user(message: Message, state: RenderState): Part[] {
  const parts: Part[] = [];
  const text: string[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "toolResult") {
      const id = state.ids.get(b.value.toolUseId) ?? b.value.toolUseId;
      parts.push(
        { template: `${SYSTEM}tool${MIDDLE}## Return of ` },
        { content: id },
        { template: "\n" },
        { content: toolResultText(b.value) },
        { template: IM_END },
      );
    } else {
      const value = contextText(block);
      if (value !== undefined) text.push(value);
    }
  }
  if (text.length > 0 || parts.length === 0)
    parts.push({ template: `<|im_user|>user${MIDDLE}` }, { content: text.join("\n\n") }, { template: IM_END });
  return parts;
}

function assistantBody(message: Message, state: RenderState): Part[] {
  const thinking = message.content
    .flatMap((c) => (c.block.case === "thinking" ? [c.block.value.thinking] : []))
    .join("");
  const parts: Part[] = [{ template: "<think>" }, { content: thinking }, { template: "</think>" }];
  const calls: Part[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "thinking") continue;
    if (b.case === "toolUse") {
      calls.push(
        { template: CALL_BEGIN },
        { content: state.ids.get(b.value.id) ?? b.value.id },
        { template: CALL_ARGUMENTS },
        { content: toolInputText(b.value.inputJson) },
        { template: CALL_END },
      );
    } else {
      const value = contextText(block);
      if (value !== undefined) parts.push({ content: value });
    }
  }
  if (calls.length > 0) parts.push({ template: CALLS_BEGIN }, ...calls, { template: CALLS_END });
  return parts;
}

function spec(state: RenderState): FamilySpec {
  return {
    name: "kimi-k2",
    tokens: {
      control: KIMI_CONTROL_TOKENS,
      turn: TURN_CONTROL_TOKENS,
      endOfTurn: IM_END,
      endOfGeneration: [IM_END, "[EOS]"],
    },
    calls: KIMI_CALLS,
    header,
    system: (message) => [
      { template: `${SYSTEM}system${MIDDLE}` },
      { content: systemMessageText(message) },
      { template: IM_END },
    ],
    user: (message) => user(message, state),
    assistantHeader: () => ASSISTANT_HEADER,
    assistantBody: (message) => assistantBody(message, state),
    assistantClose: () => IM_END,
    generation: () => ({ header: ASSISTANT_HEADER, prefill: "", thinkingOpen: false }),
  };
}

export class KimiK2Format extends FamilyFormat {
  readonly #state: { ids: ReadonlyMap<string, string> };

  constructor() {
    const state = { ids: new Map<string, string>() as ReadonlyMap<string, string> };
    super(spec(state));
    this.#state = state;
  }

  /** The skeleton's render, with every call's model-visible ID known first (rendering is synchronous). */
  override render(conversation: Conversation, options: RenderOptions = {}): RenderedPrompt {
    this.#state.ids = modelCallIds(conversation, options.rawAssistantTurn);
    try {
      return super.render(conversation, options);
    } finally {
      this.#state.ids = new Map();
    }
  }

  override toolCallGrammar(options: ToolCallGrammarOptions): string {
    return kimiToolCallGrammar(this.spec.markup, options);
  }

  override answerGrammar(options: AnswerGrammarOptions): string {
    return kimiAnswerGrammar(this.spec.markup, options);
  }

  override fixedToolCallsGrammar(calls: readonly FixedToolCall[], _thinkingOpen: boolean, firstCallIndex = 0): string {
    return kimiFixedCallsGrammar(this.spec.markup, calls.slice(0, this.maxCallsPerTurn), firstCallIndex);
  }

  /** A turn without reasoning starts `<think></think>`, as the template writes it. */
  override fixedTextGrammar(text: string): string {
    return super.fixedTextGrammar(text, true);
  }

  override plainTextGrammar(): string {
    return super.plainTextGrammar(true);
  }
}
