/**
 * HTML → readable text for web_fetch: the title, and the body's text with scripts, styles and
 * markup removed, block elements on their own lines, entities decoded, whitespace collapsed.
 * A page's words, not its layout.
 *
 * Parsing is htmlparser2's Tokenizer (htmlparser2 12.0.0: engines node >= 20.19, the same floor as
 * this repo; ESM with its own types; a state machine that looks at each character once, decodes
 * all HTML5 entities and knows the raw-text elements, so `<script>` bodies never read as markup).
 * Not its Parser: that one keeps open elements in an array it `unshift`s and searches on every
 * close tag, quadratic on deep or mismatched nesting (200k unclosed `<div>`s: 7.7 s here). Not
 * parse5: a spec tree builder, heavier, and its adoption-agency steps are not linear either; we
 * need no tree. What the page's structure means for the text is kept here in O(1) state per
 * event: a counter per skipped element, a flag for the title.
 *
 * Bounded three ways, whatever the page: the input is cut to `maxInputChars`, parsing stops once
 * `maxTextChars` of text are out (callers read no more than that), and a clock checked every few
 * hundred events stops it after `maxMs`. A cut returns the text so far.
 */
import { Tokenizer, type TokenizerCallbacks } from "htmlparser2";

export interface PageText {
  title: string;
  text: string;
}

export interface HtmlTextLimits {
  /** Characters of HTML looked at (default 4 Mi; web_fetch's byte cap is 2 MiB by default). */
  maxInputChars?: number;
  /** Text produced before parsing stops (default 1 Mi). */
  maxTextChars?: number;
  /** Wall-clock budget of one conversion in ms (default 200): the turn's one JS thread waits on it. */
  maxMs?: number;
}

/** Elements on a line of their own. */
const BLOCK = new Set(
  "p div br hr h1 h2 h3 h4 h5 h6 li ul ol tr table section article header footer nav main aside pre blockquote dt dd figure figcaption form".split(
    " ",
  ),
);
/** Phrasing elements: their text runs on with the words around them. Any other tag separates words. */
const INLINE = new Set(
  "a abbr b bdi bdo cite code data del dfn em font i ins kbd mark q s samp small span strong sub sup time u var wbr".split(
    " ",
  ),
);
/** Elements whose content is not page text. */
const SKIPPED = new Set(["script", "style", "noscript", "template", "svg", "head"]);
const MAX_TITLE_CHARS = 4096;
/** Events between two looks at the clock. */
const CLOCK_EVERY = 256;
const SPACES = /[ \t\f\v\r\u00a0]+/g;

export function htmlToText(html: string, limits: HtmlTextLimits = {}): PageText {
  const maxInput = limits.maxInputChars ?? 4 * 1024 * 1024;
  const input = html.length > maxInput ? html.slice(0, maxInput) : html;
  const maxText = limits.maxTextChars ?? 1024 * 1024;
  const deadline = performance.now() + (limits.maxMs ?? 200);
  const lines = new TextLines();
  const title = new TitleText();
  const skipped = new Map<string, number>();
  let skipping = 0;
  let lastOpened = "";
  let events = 0;

  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks());
  tokenizer.write(input);
  tokenizer.end();
  return { title: title.finish(), text: lines.finish(maxText) };

  function tick(): void {
    if (++events % CLOCK_EVERY === 0 && performance.now() > deadline) tokenizer.pause();
  }

  function emit(data: string): void {
    tick();
    if (title.open) title.add(data);
    else if (skipping === 0) {
      lines.add(data);
      if (lines.length >= maxText) tokenizer.pause();
    }
  }

  function open(name: string): void {
    tick();
    lastOpened = name;
    // A head left open ends where the body starts.
    if (name === "body") unskip("head", skipped.get("head") ?? 0);
    if (SKIPPED.has(name)) {
      skipped.set(name, (skipped.get(name) ?? 0) + 1);
      skipping++;
    } else if (name === "title" && !title.done && !skipped.has("svg")) title.start();
    separate(name);
  }

  function close(name: string): void {
    tick();
    lastOpened = "";
    if (skipped.has(name)) unskip(name, 1);
    else if (name === "title" && title.open) title.end();
    separate(name);
  }

  function unskip(name: string, count: number): void {
    const depth = skipped.get(name) ?? 0;
    const n = Math.min(depth, count);
    skipping -= n;
    if (depth - n > 0) skipped.set(name, depth - n);
    else skipped.delete(name);
  }

  function separate(name: string): void {
    if (skipping > 0 || title.open) return;
    if (BLOCK.has(name)) lines.lineBreak();
    else if (!INLINE.has(name)) lines.add(" ");
  }

  function callbacks(): TokenizerCallbacks {
    const ignore = () => tick();
    return {
      ontext: (start, end) => emit(input.slice(start, end)),
      ontextentity: (codepoint) => emit(String.fromCodePoint(codepoint)),
      onopentagname: (start, end) => open(input.slice(start, end).toLowerCase()),
      onclosetag: (start, end) => close(input.slice(start, end).toLowerCase()),
      // `<svg/>`: nothing was opened that waits for a close.
      onselfclosingtag: () => (SKIPPED.has(lastOpened) ? unskip(lastOpened, 1) : undefined),
      onopentagend: ignore,
      onattribname: ignore,
      onattribdata: ignore,
      onattribentity: ignore,
      onattribend: ignore,
      oncdata: ignore,
      oncomment: ignore,
      ondeclaration: ignore,
      onprocessinginstruction: ignore,
      onend: () => undefined,
    };
  }
}

/** The first `<title>`'s text, capped. */
class TitleText {
  open = false;
  done = false;
  #parts: string[] = [];
  #length = 0;

  start(): void {
    this.open = true;
  }

  add(data: string): void {
    if (this.#length < MAX_TITLE_CHARS) this.#parts.push(data.slice(0, MAX_TITLE_CHARS - this.#length));
    this.#length += data.length;
  }

  end(): void {
    this.open = false;
    this.done = true;
  }

  finish(): string {
    return this.#parts.join("").replace(/\s+/g, " ").trim();
  }
}

/**
 * Text as lines: runs of spaces collapse as they arrive (also across pieces), lines are trimmed
 * and empty ones dropped, so `length` is the length of the text so far, in one pass.
 */
class TextLines {
  length = 0;
  #parts: string[] = [];
  #lineLength = 0;
  #endsWithSpace = false;

  /** Text as the page has it: its newlines are line breaks too. */
  add(data: string): void {
    let from = 0;
    for (let nl = data.indexOf("\n"); nl >= 0; nl = data.indexOf("\n", from)) {
      this.#inline(data.slice(from, nl));
      this.lineBreak();
      from = nl + 1;
    }
    this.#inline(from === 0 ? data : data.slice(from));
  }

  lineBreak(): void {
    if (this.#lineLength === 0) return;
    if (this.#endsWithSpace) this.#dropTrailingSpace();
    this.#parts.push("\n");
    this.length++;
    this.#lineLength = 0;
    this.#endsWithSpace = false;
  }

  /** The text, at most `max` characters (each line trimmed once more of any other white space). */
  finish(max: number): string {
    this.lineBreak();
    return this.#parts
      .join("")
      .slice(0, max)
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "")
      .join("\n");
  }

  #inline(segment: string): void {
    let s = segment.replace(SPACES, " ");
    if (s.startsWith(" ") && (this.#lineLength === 0 || this.#endsWithSpace)) s = s.slice(1);
    if (s === "") return;
    this.#parts.push(s);
    this.#lineLength += s.length;
    this.length += s.length;
    this.#endsWithSpace = s.endsWith(" ");
  }

  #dropTrailingSpace(): void {
    const last = this.#parts.length - 1;
    this.#parts[last] = (this.#parts[last] ?? "").slice(0, -1);
    this.#lineLength--;
    this.length--;
  }
}
