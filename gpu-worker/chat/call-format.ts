/**
 * What a family describes once: its control tokens and how its tool calls, thinking and turn ends
 * are spelled. The format engine derives from a `CallFormat` the grammar that forces a call
 * (engine/call-markup.ts), the rendering of past calls (same file) and the streaming reader of
 * sampled calls (parse/span-reader.ts). Nothing here is code a family writes: only text.
 */

/**
 * Markup text: written as given. A `Lenient` piece is written as `write` and read more loosely, for
 * markup a model may vary (DeepSeek's `function` type word, its optional `json` fence language).
 */
export type MarkupText = string | readonly (string | Lenient)[];

export interface Lenient {
  write: string;
  /** `word`: any text without `<` or a line break; `optional`: `write` or nothing. */
  read: "word" | "optional";
}

/** `write` here, any type word when read. */
export const anyWord = (write: string): Lenient => ({ write, read: "word" });
/** `write` here, optional when read. */
export const optional = (write: string): Lenient => ({ write, read: "optional" });

export interface ThinkingMarkers {
  open: string;
  close: string;
  /** What a grammar samples after an open thinking block to close it with empty reasoning. */
  forcedClose: string;
  /** The model opens thinking itself: a leading `open` in its output starts thinking. */
  modelOpens: boolean;
}

/** How a call's arguments are written between its name markup and its close. */
export type CallArguments =
  /** One JSON object holding the name and the arguments: `{"name": N, "arguments": {…}}`. */
  | { kind: "json-envelope"; nameKey: string; argumentsKey: string }
  /** The arguments JSON object itself, after the name markup. */
  | { kind: "json" }
  /**
   * One tagged value per parameter: `key.open` KEY `key.close` VALUE `valueClose`. String parameters
   * are raw text, others JSON (by the tool's schema). No raw value may contain a `reserved` spelling.
   */
  | { kind: "xml"; key: { open: string; close: string }; valueClose: string; reserved: readonly string[] };

export interface CallMarkers {
  /** Opens one call. Leading whitespace is written but not searched for; the rest opens a parsed span. */
  open: string;
  /** Between `open` and the tool name (json and xml arguments). */
  beforeName?: MarkupText;
  /** Between the tool name and the arguments (json and xml arguments). */
  afterName?: MarkupText;
  /** After the arguments. Its last tag ends the call's span. */
  close: string;
}

export interface CallFormat {
  thinking: ThinkingMarkers;
  /** Wraps all the calls of a turn (DeepSeek's calls block); absent: each call stands alone. */
  section?: { open: string; close: string };
  /** Between two calls of a turn. */
  separator: string;
  call: CallMarkers;
  arguments: CallArguments;
  /** Opens visible text where plain text is not what a turn starts with (harmony's final channel). */
  textOpen?: string;
  /** Most calls one generation makes (1 where a call itself ends the generation); default 3. */
  maxPerTurn?: number;
}

export interface FamilyTokens {
  /** Every control-token spelling of the template: rendered template text splits on these. */
  control: readonly string[];
  /** Control tokens the model itself samples inside its turn: a replayed turn renders them special. */
  turn: readonly string[];
  endOfTurn: string;
  /** The control-token texts that end a generation (the engine stops on them). */
  endOfGeneration: readonly string[];
}

/** Most calls a parallel forced turn may make. */
export const MAX_PARALLEL_CALLS = 3;

/** The text a `MarkupText` writes. */
export function writtenText(text: MarkupText | undefined): string {
  if (text === undefined) return "";
  if (typeof text === "string") return text;
  return text.map((p) => (typeof p === "string" ? p : p.write)).join("");
}

/** The tag that ends a markup (`</tool_call>` of `</function>\n</tool_call>`): after its last whitespace. */
export function lastTag(text: string): string {
  const trimmed = text.trim();
  const at = trimmed.search(/\s\S*$/);
  return at < 0 ? trimmed : trimmed.slice(at + 1);
}
