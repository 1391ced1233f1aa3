/**
 * The one skeleton every chat format runs on. A family is a `FamilySpec`: its tokens and its call
 * format described once (call-format.ts), and its template: how the header (BOS, system, tools)
 * and each message render and what the generation prefix is. `FamilyFormat` does the rest: the
 * message loop, exact-turn replay, continuing a trailing assistant message, offsets, and, derived
 * from the call format, the grammars and the streaming parser.
 */
import {
  type Conversation,
  type Message,
  Role,
  ThinkingMode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { CallFormat, FamilyTokens } from "../call-format.ts";
import { answerGrammar } from "../grammar/answer-grammar.ts";
import type { ToolCallMarkup } from "../grammar/tool-grammar.ts";
import * as grammars from "../grammar/tool-grammar.ts";
import { tagMarkup } from "../parse/span-reader.ts";
import { TaggedOutputParser, type TagMarkup } from "../parse/tagged-parser.ts";
import type {
  AnswerGrammarOptions,
  ChatFormat,
  FixedToolCall,
  OutputParser,
  OutputParserOptions,
  PromptSegment,
  RenderedPrompt,
  RenderOptions,
  ToolCallGrammarOptions,
} from "../types.ts";
import { maxCallsPerTurn, toolCallMarkup } from "./call-markup.ts";
import { emitParts, type Part } from "./content.ts";
import { ControlTokenSplitter, PromptBuilder } from "./prompt-builder.ts";

/** What a family may look at while rendering one message. */
export interface RenderContext {
  conversation: Conversation;
  index: number;
  /** The message before this one (undefined for the first). */
  previous: Message | undefined;
  /** The request asks for thinking (enabled or adaptive). */
  thinking: boolean;
  /** Tool name of every tool_use ID in the history (tool results name their tool in some formats). */
  toolNames: ReadonlyMap<string, string>;
}

export interface GenerationPrefix {
  /** The assistant role header. */
  header: string;
  /** Sampling starts after this (e.g. "<think>\n"). */
  prefill: string;
  /** The prefill leaves a thinking block open. */
  thinkingOpen: boolean;
}

export interface FamilySpec {
  readonly name: string;
  readonly tokens: FamilyTokens;
  /** How calls, thinking and visible text are spelled: grammars and the parser derive from it. */
  readonly calls: CallFormat;
  /** Everything before the first message: BOS, system prompt, tools. */
  header(conversation: Conversation, thinking: boolean): Part[];
  system(message: Message, ctx: RenderContext): Part[];
  /** A user message, tool results included. */
  user(message: Message, ctx: RenderContext): Part[];
  /** The role header of an assistant message ("" where the template has none there). */
  assistantHeader(ctx: RenderContext): string;
  assistantBody(message: Message, ctx: RenderContext): Part[];
  /** What closes an assistant message in history. */
  assistantClose(message: Message, ctx: RenderContext): string;
  generation(ctx: RenderContext): GenerationPrefix;
  /** A hand-written parser, only where output is not tagged spans (harmony's channels). */
  parser?(options: OutputParserOptions): OutputParser;
}

/** A family with what its call format derives: the markup its grammars force. */
export interface DerivedFamilySpec extends FamilySpec {
  readonly markup: ToolCallMarkup;
}

function toolNamesOf(conversation: Conversation): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of conversation.messages)
    for (const block of message.content)
      if (block.block.case === "toolUse") names.set(block.block.value.id, block.block.value.name);
  return names;
}

export class FamilyFormat implements ChatFormat {
  readonly name: string;
  readonly endOfTurnText: string;
  readonly endOfGenerationTexts: readonly string[];
  readonly maxCallsPerTurn: number;
  readonly spec: DerivedFamilySpec;
  readonly #splitter: ControlTokenSplitter;
  readonly #turnSplitter: ControlTokenSplitter;
  readonly #tags: TagMarkup | undefined;

  constructor(spec: FamilySpec) {
    this.spec = { ...spec, markup: toolCallMarkup(spec.name, spec.calls) };
    this.name = spec.name;
    this.endOfTurnText = spec.tokens.endOfTurn;
    this.endOfGenerationTexts = spec.tokens.endOfGeneration;
    this.maxCallsPerTurn = maxCallsPerTurn(spec.calls);
    this.#splitter = new ControlTokenSplitter(spec.tokens.control);
    this.#turnSplitter = new ControlTokenSplitter(spec.tokens.turn);
    this.#tags = spec.parser === undefined ? tagMarkup(spec.calls) : undefined;
  }

  render(conversation: Conversation, options: RenderOptions = {}): RenderedPrompt {
    const spec = this.spec;
    const b = new PromptBuilder(this.#splitter);
    const thinking = (conversation.thinking?.mode ?? ThinkingMode.DISABLED) !== ThinkingMode.DISABLED;
    const toolNames = toolNamesOf(conversation);
    emitParts(b, spec.header(conversation, thinking));
    const messageOffsets: number[] = [];
    const { messages } = conversation;
    const context = (index: number): RenderContext => ({
      conversation,
      index,
      previous: messages[index - 1],
      thinking,
      toolNames,
    });
    let open: { start: number; prefill: string } | undefined;
    messages.forEach((message, i) => {
      messageOffsets.push(b.length);
      const ctx = context(i);
      if (message.role === Role.SYSTEM) emitParts(b, spec.system(message, ctx));
      else if (message.role === Role.ASSISTANT) {
        const replay = options.rawAssistantTurn?.(message, i);
        const raw = typeof replay === "object" ? replay.raw : replay;
        const last = i === messages.length - 1;
        const body = raw === undefined ? spec.assistantBody(message, ctx) : [];
        const empty = !message.content.some((c) => c.block.case !== undefined) || body.length === 0;
        if (last && raw === undefined && empty) return; // nothing to continue: plain generation
        const start = b.length;
        b.template(spec.assistantHeader(ctx));
        const contentStart = b.length;
        // A replayed turn: its bytes verbatim; only the control tokens the model samples are special.
        if (raw !== undefined) {
          if (typeof replay === "object") b.content(replay.context).template("\n");
          for (const s of this.splitTurn(raw)) s.special ? b.template(s.text) : b.replayed(s.text);
        } else emitParts(b, body);
        // A trailing assistant message is continued (prefill), not closed.
        if (last) open = { start, prefill: b.text.slice(contentStart) };
        else b.template(spec.assistantClose(message, ctx));
      } else emitParts(b, spec.user(message, ctx));
    });
    const base = { segments: b.segments, messageOffsets };
    if (open !== undefined) {
      return {
        ...base,
        text: b.text,
        generationPrefixStart: open.start,
        generationPrefill: open.prefill,
        thinkingOpen: false,
      };
    }
    const generationPrefixStart = b.length;
    const generation = spec.generation(context(messages.length));
    b.template(generation.header).template(generation.prefill);
    return {
      ...base,
      text: b.text,
      generationPrefixStart,
      generationPrefill: generation.prefill,
      thinkingOpen: generation.thinkingOpen,
    };
  }

  createOutputParser(options: OutputParserOptions): OutputParser {
    if (this.#tags !== undefined) return new TaggedOutputParser(this.#tags, options);
    return (this.spec.parser as (options: OutputParserOptions) => OutputParser)(options);
  }

  toolCallGrammar(options: ToolCallGrammarOptions): string {
    return grammars.toolCallGrammar(this.spec.markup, options, this.maxCallsPerTurn);
  }

  answerGrammar(options: AnswerGrammarOptions): string {
    return answerGrammar(this.spec.markup, options, this.maxCallsPerTurn);
  }

  fixedTextGrammar(text: string, thinkingOpen = false): string {
    return grammars.fixedTextGrammar(this.spec.markup, text, thinkingOpen);
  }

  fixedToolCallsGrammar(calls: readonly FixedToolCall[], thinkingOpen: boolean): string {
    return grammars.fixedToolCallsGrammar(this.spec.markup, calls.slice(0, this.maxCallsPerTurn), thinkingOpen);
  }

  splitTurn(raw: string): PromptSegment[] {
    return this.#turnSplitter.split(raw);
  }

  plainTextGrammar(thinkingOpen: boolean): string {
    return grammars.plainTextGrammar(this.spec.markup, thinkingOpen);
  }
}
