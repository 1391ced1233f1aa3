/**
 * A streaming parser for sampled output: thinking until the close tag, then text, with tool-call
 * spans buffered and parsed whole. Text streams as it arrives; only a possible partial tag (or a
 * lone high surrogate) at a chunk end and trailing newlines are held back, so any chunking of the
 * same output yields the same events (up to how text/thinking deltas are split).
 *
 * Newline conventions (match the renderers): one leading "\n" of thinking and all trailing
 * newlines before the close tag are dropped; text drops leading newlines (at its start and after
 * thinking or a tool call) and trailing newlines before a tool call or at the end.
 */
import type { OutputEvent, OutputParser } from "./types.ts";

export type ToolCallEvent = Extract<OutputEvent, { type: "tool_call" }>;

export interface ParserMarkup {
  thinkClose: string;
  /** Opens a tool span (one call in ChatML, a block of calls in DeepSeek). */
  toolOpen: string;
  toolClose: string;
  /**
   * The calls in a complete span (open and close tags included); undefined when malformed.
   * Each call's `raw` is a substring of the span; `offset` is filled in by the parser.
   */
  parseToolSpan(raw: string): Omit<ToolCallEvent, "offset">[] | undefined;
}

type Mode = "thinking" | "text" | "tool";

/** Length of the longest proper prefix of `tag` that `text` ends with. */
function partialTagLength(text: string, tag: string): number {
  for (let k = Math.min(tag.length - 1, text.length); k > 0; k--) {
    if (text.endsWith(tag.slice(0, k))) return k;
  }
  return 0;
}

/** Where to cut `text` so that no partial `tag` and no lone high surrogate is emitted. */
function safeCut(text: string, tag: string): number {
  let cut = text.length - partialTagLength(text, tag);
  const last = text.charCodeAt(cut - 1);
  if (cut > 0 && last >= 0xd800 && last <= 0xdbff) cut--;
  return cut;
}

const TRAILING_NEWLINES = /\n+$/;

export class StreamingOutputParser implements OutputParser {
  readonly #markup: ParserMarkup;
  #mode: Mode;
  #buf = "";
  /** Chars of input consumed before `#buf`. */
  #consumed = 0;
  #events: OutputEvent[] = [];
  #thinkingAtStart = true;
  #thinkingHeld = "";
  #textAtStart = true;
  #textHeld = "";
  /** Newlines dropped before the current tool span, restored if the span is malformed. */
  #droppedBeforeTool = "";

  constructor(markup: ParserMarkup, options: { thinkingOpen: boolean }) {
    this.#markup = markup;
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
        if (final) {
          this.#thinking(this.#buf, true);
          this.#consume(this.#buf.length);
          return;
        }
        const cut = safeCut(this.#buf, m.thinkClose);
        this.#thinking(this.#buf.slice(0, cut), false);
        this.#consume(cut);
        return;
      }
      if (this.#mode === "text") {
        const at = this.#buf.indexOf(m.toolOpen);
        if (at >= 0) {
          this.#text(this.#buf.slice(0, at), "tool");
          this.#consume(at);
          this.#mode = "tool";
          continue;
        }
        const cut = final ? this.#buf.length : safeCut(this.#buf, m.toolOpen);
        this.#text(this.#buf.slice(0, cut), final ? "end" : "more");
        this.#consume(cut);
        return;
      }
      // Tool span: buffered until its close tag.
      const close = this.#buf.indexOf(m.toolClose, m.toolOpen.length);
      if (close < 0) {
        if (final) {
          this.#malformed(this.#buf);
          this.#consume(this.#buf.length);
        }
        return;
      }
      const raw = this.#buf.slice(0, close + m.toolClose.length);
      const spanStart = this.#consumed;
      this.#consume(raw.length);
      this.#mode = "text";
      const calls = m.parseToolSpan(raw);
      if (calls === undefined) this.#malformed(raw);
      else {
        let from = 0;
        for (const call of calls) {
          const at = raw.indexOf(call.raw, from);
          from = at + call.raw.length;
          this.#events.push({ ...call, offset: spanStart + at });
        }
        this.#droppedBeforeTool = "";
        this.#textAtStart = true;
      }
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

  #text(chunk: string, until: "more" | "tool" | "end"): void {
    let s = this.#textHeld + chunk;
    this.#textHeld = "";
    if (this.#textAtStart) {
      s = s.replace(/^\n+/, "");
      if (s !== "") this.#textAtStart = false;
    }
    const trailing = s.match(TRAILING_NEWLINES)?.[0] ?? "";
    s = s.slice(0, s.length - trailing.length);
    if (until === "more") this.#textHeld = trailing;
    else if (until === "tool") this.#droppedBeforeTool = trailing;
    if (s !== "") this.#events.push({ type: "text", text: s });
  }

  /** A tool span that does not parse is plain text, with the newlines before it restored. */
  #malformed(raw: string): void {
    this.#events.push({ type: "text", text: this.#droppedBeforeTool + raw });
    this.#droppedBeforeTool = "";
    this.#textAtStart = false;
  }
}
