/** Accumulates prompt segments: control tokens special, everything else plain text. */
import type { PromptSegment } from "../types.ts";

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Splits text on a fixed set of control-token strings. */
export class ControlTokenSplitter {
  readonly #pattern: RegExp | undefined;

  constructor(controlTokens: readonly string[]) {
    const sorted = [...controlTokens].sort((a, b) => b.length - a.length);
    this.#pattern = sorted.length === 0 ? undefined : new RegExp(sorted.map(escapeRegExp).join("|"), "g");
  }

  split(text: string): PromptSegment[] {
    if (this.#pattern === undefined) return text === "" ? [] : [{ text, special: false }];
    const out: PromptSegment[] = [];
    let last = 0;
    for (const m of text.matchAll(this.#pattern)) {
      const at = m.index ?? 0;
      if (at > last) out.push({ text: text.slice(last, at), special: false });
      out.push({ text: m[0], special: true });
      last = at + m[0].length;
    }
    if (last < text.length) out.push({ text: text.slice(last), special: false });
    return out;
  }
}

export class PromptBuilder {
  readonly #segments: PromptSegment[] = [];
  #text = "";

  constructor(readonly splitter: ControlTokenSplitter) {}

  get length(): number {
    return this.#text.length;
  }

  get text(): string {
    return this.#text;
  }

  get segments(): PromptSegment[] {
    return this.#segments;
  }

  /** Text from the client (or the model): never parsed for control tokens. */
  content(text: string): this {
    return this.#push({ text, special: false });
  }

  /** Text of a replayed assistant turn, as the model sampled it (plain; see PromptSegment.replayed). */
  replayed(text: string): this {
    return this.#push({ text, special: false, replayed: true });
  }

  /** Template text: the format's control tokens in it become special segments. */
  template(text: string): this {
    for (const segment of this.splitter.split(text)) this.#push(segment);
    return this;
  }

  #push(segment: PromptSegment): this {
    if (segment.text === "") return this;
    const last = this.#segments.at(-1);
    // Plain text merges; control tokens stay one segment each.
    if (last !== undefined && !last.special && !segment.special) {
      last.text += segment.text;
      if (segment.replayed) last.replayed = true;
    } else this.#segments.push({ ...segment });
    this.#text += segment.text;
    return this;
  }
}

/**
 * The segments of a prompt from char `offset` on (for appending the rest of a prompt to live KV
 * whose text ends at `offset`). A plain segment may be cut; undefined when `offset` falls inside a
 * control token, where no tokenization of the remainder can match the rendered prompt.
 */
export function segmentsFrom(segments: readonly PromptSegment[], offset: number): PromptSegment[] | undefined {
  const out: PromptSegment[] = [];
  let at = 0;
  for (const segment of segments) {
    const end = at + segment.text.length;
    if (end > offset) {
      if (at >= offset) out.push({ ...segment });
      else if (segment.special) return undefined;
      else out.push({ text: segment.text.slice(offset - at), special: false });
    }
    at = end;
  }
  return offset > at ? undefined : out;
}

/**
 * The segments of a prompt before char `offset` (a plain segment may be cut); undefined when
 * `offset` falls inside a control token.
 */
export function segmentsUpTo(segments: readonly PromptSegment[], offset: number): PromptSegment[] | undefined {
  const out: PromptSegment[] = [];
  let at = 0;
  for (const segment of segments) {
    if (at >= offset) break;
    const end = at + segment.text.length;
    if (end <= offset) out.push({ ...segment });
    else if (segment.special) return undefined;
    else out.push({ text: segment.text.slice(0, offset - at), special: false });
    at = end;
  }
  return offset > at ? undefined : out;
}
