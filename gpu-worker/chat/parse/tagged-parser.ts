/**
 * The streaming parser of the tag-delimited formats (every family but harmony): thinking until
 * its close tag, then text, with tool spans read by the format's `SpanParser` as they arrive.
 * Text streams as it arrives; only a possible partial tag (or a lone high surrogate) at a chunk
 * end and trailing newlines are held back, so any chunking of the same output yields the same
 * events (up to how text/thinking/argument deltas are split). Span markup never becomes text.
 *
 * Newline conventions (match the renderers): one leading "\n" of thinking and all trailing
 * newlines before the close tag are dropped; text drops leading newlines (at its start and after
 * thinking or a tool call) and trailing newlines before a tool call or at the end.
 */

import type { OutputEvent, OutputParser, OutputParserOptions } from "../types.ts";
import { CallStream, type SpanParser, type ToolSchemas, toolSchemas } from "./call-stream.ts";

export interface TagMarkup {
  /** Opens thinking when it is the first thing sampled (after newlines); absent: never. */
  thinkOpen?: string;
  thinkClose: string;
  /** Opens a tool span (one call in Hermes, a block of calls in DeepSeek). */
  spanOpen: string;
  readSpan: SpanParser;
}

type Mode = "thinking" | "text" | "span";

/** Length of the longest proper prefix of `tag` that `text` ends with. */
function partialTagLength(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) {
    if (text.endsWith(tag.slice(0, k))) return k;
  }
  return 0;
}

/** Where to cut `text` so that no partial `tag` and no lone high surrogate is emitted. */
export function safeCut(text: string, tag: string): number {
  let cut = text.length - partialTagLength(text, tag);
  const last = text.charCodeAt(cut - 1);
  if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut--;
  return cut;
}

const TRAILING_NEWLINES = /\n+$/;

export class TaggedOutputParser implements OutputParser {
  readonly #markup: TagMarkup;
  readonly #tools: ToolSchemas;
  #mode: Mode;
  #buf = "";
  /** Chars of input consumed before `#buf`. */
  #consumed = 0;
  #events: OutputEvent[] = [];
  #thinkingAtStart = true;
  #thinkingHeld = "";
  /** Nothing but newlines sampled yet: an opening think tag may still come. */
  #outputAtStart = true;
  #textAtStart = true;
  #textHeld = "";
  #calls = 0;
  #span: CallStream | undefined;

  constructor(markup: TagMarkup, options: OutputParserOptions) {
    this.#markup = markup;
    this.#tools = toolSchemas(options.tools);
    this.#mode = options.thinkingOpen ? "thinking" : "text";
  }

  push(text: string): OutputEvent[] {
    this.#buf += text;
    this.#process(false);
    return this.#drain();
  }

  finish(): OutputEvent[] {
    this.#process(true);
    return this.#drain();
  }

  #drain(): OutputEvent[] {
    const out = this.#events;
    this.#events = [];
    return out;
  }

  #process(final: boolean): void {
    const m = this.#markup;
    for (;;) {
      if (this.#mode === "thinking") {
        const at = this.#buf.indexOf(m.thinkClose);
        if (at >= 0) {
          this.#thinking(this.#buf.slice(0, at), true);
          this.#consume(at + m.thinkClose.length);
          this.#mode = "text";
          this.#textAtStart = true;
          continue;
        }
        const cut = final ? this.#buf.length : safeCut(this.#buf, m.thinkClose);
        this.#thinking(this.#buf.slice(0, cut), final);
        this.#consume(cut);
        return;
      }
      if (this.#mode === "text") {
        if (this.#outputAtStart && m.thinkOpen !== undefined) {
          const lead = this.#buf.match(/^\n*/)?.[0].length ?? 0;
          const rest = this.#buf.slice(lead);
          if (rest.startsWith(m.thinkOpen)) {
            this.#consume(lead + m.thinkOpen.length);
            this.#outputAtStart = false;
            this.#mode = "thinking";
            continue;
          }
          if (!final && m.thinkOpen.startsWith(rest)) return; // maybe the opening tag, still arriving
          if (rest !== "") this.#outputAtStart = false;
        }
        const at = this.#buf.indexOf(m.spanOpen);
        if (at >= 0) {
          this.#text(this.#buf.slice(0, at), "span");
          this.#consume(at);
          this.#mode = "span";
          this.#span = new CallStream(this.#tools, () => this.#calls++);
          continue;
        }
        // At the end too: a call that was cut inside its opening tag is markup, never text.
        const cut = safeCut(this.#buf, m.spanOpen);
        this.#text(this.#buf.slice(0, cut), final ? "end" : "more");
        this.#consume(final ? this.#buf.length : cut);
        return;
      }
      // Tool span: read as it arrives, until the format's reader says it closed.
      const span = this.#span as CallStream;
      const reading = m.readSpan(this.#buf, this.#tools);
      const length = reading.end ?? this.#buf.length;
      this.#events.push(...span.update(this.#buf.slice(0, length), reading, this.#consumed, final));
      if (reading.end === undefined) {
        if (final) this.#consume(this.#buf.length);
        return;
      }
      this.#consume(reading.end);
      this.#mode = "text";
      this.#textAtStart = true;
      this.#span = undefined;
    }
  }

  #consume(n: number): void {
    this.#buf = this.#buf.slice(n);
    this.#consumed += n;
  }

  #thinking(chunk: string, closing: boolean): void {
    let s = this.#thinkingHeld + chunk;
    this.#thinkingHeld = "";
    if (this.#thinkingAtStart && s !== "") {
      if (s.startsWith("\n")) s = s.slice(1);
      this.#thinkingAtStart = false;
    }
    const trailing = s.match(TRAILING_NEWLINES)?.[0] ?? "";
    s = s.slice(0, s.length - trailing.length);
    if (!closing) this.#thinkingHeld = trailing;
    if (s !== "") this.#events.push({ type: "thinking", text: s });
    if (closing) this.#events.push({ type: "thinking_end" });
  }

  #text(chunk: string, until: "more" | "span" | "end"): void {
    let s = this.#textHeld + chunk;
    this.#textHeld = "";
    if (this.#textAtStart) {
      s = s.replace(/^\n+/, "");
      if (s !== "") this.#textAtStart = false;
    }
    const trailing = s.match(TRAILING_NEWLINES)?.[0] ?? "";
    s = s.slice(0, s.length - trailing.length);
    if (until === "more") this.#textHeld = trailing;
    if (s !== "") this.#events.push({ type: "text", text: s });
  }
}
