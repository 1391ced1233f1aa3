/**
 * The chat-format contract: a format owns the exact bytes of a prompt, parses sampled output
 * back into events, and builds the GBNF grammars that constrain sampling.
 * Everything here is pure: no engine, no I/O.
 */
import type { Conversation, Message } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

/**
 * A piece of the prompt. `special: true` only for the format's control tokens (role markers,
 * BOS, end-of-turn, ...), which must be tokenized with control-token parsing ON. Every other byte
 * (client content and plain template text alike) is in `special: false` segments, so text that
 * spells a control token never becomes one. Adjacent `special: false` pieces are merged.
 */
export interface PromptSegment {
  text: string;
  special: boolean;
  /**
   * Holds text of a replayed assistant turn (the model's own sampled bytes): only such a segment may
   * take the tokens the model sampled for it, never a template or client segment that happens to
   * spell the same text.
   */
  replayed?: boolean;
}

export interface RenderedPrompt {
  segments: PromptSegment[];
  /** All segments concatenated. */
  text: string;
  /** Char offset in `text` where message i starts (its role header). */
  messageOffsets: number[];
  /** Offset where the assistant generation prefix starts (its role header). */
  generationPrefixStart: number;
  /**
   * The generation prefix after the assistant role header (e.g. "<think>\n"). The string to give
   * back through `rawAssistantTurn` when this turn is replayed is `generationPrefill + sampled text`
   * (the end-of-generation token excluded).
   */
  generationPrefill: string;
  /** The prefix ends inside an open thinking block: sampled text starts as thinking. */
  thinkingOpen: boolean;
}

/** A remembered turn replayed after a run of blocks Frontier did not make (rendered as `context`). */
export interface RawTurnAfterContext {
  /** Client text (never parsed for control tokens) rendered before the raw turn, e.g. a foreign search exchange. */
  context: string;
  raw: string;
}

export interface RenderOptions {
  /**
   * Exact-turn memory. When it returns a string for an assistant message, that string is rendered
   * verbatim as everything between the assistant role header and the end-of-turn marker, instead
   * of re-serialising the client's blocks; with `context`, that context comes first, then a newline.
   */
  rawAssistantTurn?: (message: Message, index: number) => string | RawTurnAfterContext | undefined;
}

/**
 * What a streaming parser reports. A tool call streams as `tool_call_start` (its name is complete
 * and names a known tool) → `tool_call_args` (JSON text; the deltas of one call concatenate to its
 * arguments object) → `tool_call_end`. Every started call ends, and its arguments always form one
 * JSON object: a call cut by the end of generation (`truncated`) or whose markup breaks
 * (`malformed`) is closed there (open strings and containers closed, nothing invented after the
 * last complete value). Markup that never reaches a known tool's name is dropped, never shown.
 */
export type OutputEvent =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string }
  | { type: "thinking_end" }
  | { type: "tool_call_start"; index: number; name: string }
  | { type: "tool_call_args"; index: number; text: string }
  | {
      type: "tool_call_end";
      index: number;
      name: string;
      /** The arguments object: exactly the concatenation of this call's `tool_call_args`. */
      argumentsJson: string;
      status: ToolCallStatus;
      /** The exact sampled text of this call, its markup included. */
      raw: string;
      /** UTF-16 offset of `raw` in the concatenation of all text pushed to the parser. */
      offset: number;
    };

/** `complete`: the markup closed and the arguments parsed; otherwise see `OutputEvent`. */
export type ToolCallStatus = "complete" | "truncated" | "malformed";

/** A streaming parser for one generation. Feed decoded text in any chunking. */
export interface OutputParser {
  push(text: string): OutputEvent[];
  /** End of generation: flushes held-back text; an unterminated thinking block or call is closed. */
  finish(): OutputEvent[];
}

export interface OutputParserOptions {
  /** The prompt ends inside an open thinking block. */
  thinkingOpen: boolean;
  /**
   * The request's tools: a call naming another tool is dropped, and formats whose parameters are
   * not JSON (XML parameters) read each value by its JSON-schema type. Absent: any name is accepted.
   */
  tools?: readonly GrammarTool[];
}

/** What a tool-call grammar needs of a tool (a `ToolDefinition` fits). */
export interface GrammarTool {
  name: string;
  /** JSON Schema of the arguments object; unparsable or empty means any bounded object. */
  inputSchemaJson: string;
  /** A freeform tool's grammar for its `input` string (freeform-grammar.ts). */
  inputGrammar?: { syntax: string; definition: string } | undefined;
}

export interface ToolCallGrammarOptions {
  tools: readonly GrammarTool[];
  /** "any": one of `tools`; `{ name }`: exactly that tool. */
  choice: "any" | { name: string };
  /** Allow 1..3 calls instead of exactly one. */
  parallel: boolean;
  /** With `parallel`: the fewest calls (default 1; the test-only scripted policy asks for 2). */
  minCalls?: number;
  /** The prompt ends inside an open thinking block: the grammar closes it first (empty reasoning). */
  thinkingOpen: boolean;
  /** Calls the history already holds: a family that numbers calls across a conversation (Kimi) starts here. */
  firstCallIndex?: number;
}

export interface AnswerGrammarOptions {
  /** The answer's JSON Schema (parsed); undefined: any JSON object. */
  schema: unknown;
  /** Refuse keywords the grammar cannot enforce (strict-schema.ts). */
  strict: boolean;
  /** The request field holding the schema, named in refusals (`response_format.json_schema.schema`). */
  field: string;
  thinkingOpen: boolean;
  /** tool_choice auto with tools: the turn may make these calls instead of answering. */
  calls?: Omit<ToolCallGrammarOptions, "thinkingOpen">;
}

export interface FixedToolCall {
  name: string;
  /** Rendered verbatim as the arguments. */
  argumentsJson: string;
}

export interface ChatFormat {
  readonly name: string;
  /** The end-of-turn marker (an end-of-generation token of the model). */
  readonly endOfTurnText: string;
  /** The control-token texts that end a generation in this format (the engine stops on them). */
  readonly endOfGenerationTexts: readonly string[];
  /** Most calls one generation can make (1 where a call itself ends the generation, as in harmony). */
  readonly maxCallsPerTurn: number;
  render(conversation: Conversation, options?: RenderOptions): RenderedPrompt;
  createOutputParser(options: OutputParserOptions): OutputParser;
  /** How a replay renders sampled turn text: split at the control tokens the model samples in a turn. */
  splitTurn(raw: string): PromptSegment[];
  /**
   * GBNF (root rule `root`) for a forced tool-call turn in this format's exact markup.
   * After it completes only end-of-generation may follow.
   */
  toolCallGrammar(options: ToolCallGrammarOptions): string;
  /** GBNF for a JSON answer (response_format), or calls where `calls` allows them. */
  answerGrammar(options: AnswerGrammarOptions): string;
  /** GBNF producing exactly `text` (after closing an open thinking block when asked). */
  fixedTextGrammar(text: string, thinkingOpen?: boolean): string;
  /** GBNF producing exactly these calls, arguments verbatim (`firstCallIndex` as in `ToolCallGrammarOptions`). */
  fixedToolCallsGrammar(calls: readonly FixedToolCall[], thinkingOpen: boolean, firstCallIndex?: number): string;
  /** GBNF for one short sentence of lowercase ASCII words ending in ".". */
  plainTextGrammar(thinkingOpen: boolean): string;
}
