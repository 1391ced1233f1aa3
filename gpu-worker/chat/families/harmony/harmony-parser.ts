/**
 * The streaming parser of harmony (gpt-oss) output. A generation is a run of messages, each a
 * header up to `<|message|>` (never shown) and a body up to `<|end|>` (or the end of generation,
 * where `<|call|>` / `<|return|>` stop sampling):
 *   <|channel|>analysis<|message|>…<|end|>                                → thinking
 *   <|start|>assistant<|channel|>final<|message|>…                         → text
 *   <|start|>assistant<|channel|>commentary<|message|>…<|end|>             → text (a preamble)
 *   <|start|>assistant to=functions.NAME<|channel|>commentary json<|message|>{…}   → a tool call
 *   <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}
 * A message to any other recipient (built-in browser/python tools) is dropped, never shown.
 * Hand-written (see ../../README.md); the spellings it reads come from harmony's `HarmonyMarkers`.
 */
import { CallStream, jsonArgumentsCall, type ToolSchemas, toolSchemas } from "../../parse/call-stream.ts";
import { escapeRegExp } from "../../parse/markup-patterns.ts";
import { safeCut } from "../../parse/tagged-parser.ts";
import type { OutputEvent, OutputParser, OutputParserOptions } from "../../types.ts";

/** The spellings of harmony's message structure (families/harmony/harmony.ts). */
export interface HarmonyMarkers {
  start: string;
  end: string;
  message: string;
  channel: string;
  call: string;
  return: string;
  /** Names a message's recipient in its header (`to=`). */
  recipient: string;
  /** The recipient namespace of function calls (`functions.`). */
  functions: string;
  /** The channel whose messages are thinking. */
  thinkingChannel: string;
}

/** How a message header and body read. */
interface Reading {
  message: string;
  /** Tags that end a message body; `start` (the next message) is not consumed. */
  bodyEnds: readonly string[];
  start: string;
  recipient: RegExp;
  channel: RegExp;
  functions: string;
  thinkingChannel: string;
}

function reading(m: HarmonyMarkers): Reading {
  return {
    message: m.message,
    // `<|call|>` and `<|return|>` stop sampling: they only appear as text in tests.
    bodyEnds: [m.end, m.call, m.return, m.start],
    start: m.start,
    recipient: new RegExp(`${escapeRegExp(m.recipient)}([^\\s<]+)`),
    channel: new RegExp(`${escapeRegExp(m.channel)}\\s*([a-z]+)`),
    functions: m.functions,
    thinkingChannel: m.thinkingChannel,
  };
}

type Body =
  | { kind: "thinking" | "text" | "dropped" }
  | { kind: "call"; name: string; headerLength: number; stream: CallStream };

/** Where the body ends in `text` (the index and the tag's length), if it does. */
function bodyEnd(r: Reading, text: string): { at: number; length: number } | undefined {
  let best: { at: number; length: number } | undefined;
  for (const tag of r.bodyEnds) {
    const at = text.indexOf(tag);
    if (at >= 0 && (best === undefined || at < best.at)) best = { at, length: tag === r.start ? 0 : tag.length };
  }
  return best;
}

function holdBack(r: Reading, text: string): number {
  return Math.min(...r.bodyEnds.map((tag) => safeCut(text, tag)));
}

export class HarmonyOutputParser implements OutputParser {
  readonly #tools: ToolSchemas;
  readonly #r: Reading;
  /** The current message from its header on. */
  #buf = "";
  #consumed = 0;
  #body: Body | undefined;
  /** Chars of the current message's body already turned into events. */
  #sent = 0;
  #calls = 0;
  #events: OutputEvent[] = [];

  constructor(options: OutputParserOptions, markers: HarmonyMarkers) {
    this.#tools = toolSchemas(options.tools);
    this.#r = reading(markers);
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
    for (;;) {
      if (this.#body === undefined) {
        const { message } = this.#r;
        const at = this.#buf.indexOf(message);
        if (at < 0) {
          if (final) this.#consume(this.#buf.length); // a header without a body: nothing to show
          return;
        }
        this.#body = this.#open(this.#buf.slice(0, at), at + message.length);
        this.#sent = at + message.length;
        continue;
      }
      const body = this.#body;
      const rest = this.#buf.slice(this.#sent);
      const end = bodyEnd(this.#r, rest);
      if (body.kind === "call") {
        const span = this.#buf.slice(0, end === undefined ? this.#buf.length : this.#sent + end.at);
        const call = jsonArgumentsCall(body.name, span, 0, body.headerLength);
        const reading = { calls: [call], end: end === undefined ? undefined : span.length };
        this.#events.push(...body.stream.update(span, reading, this.#consumed, final));
      } else {
        // A tag cut at the end of generation is markup, never text.
        const cut = end?.at ?? holdBack(this.#r, rest);
        const chunk = rest.slice(0, cut);
        this.#sent += cut;
        if (chunk !== "" && body.kind !== "dropped")
          this.#events.push({ type: body.kind === "thinking" ? "thinking" : "text", text: chunk });
      }
      if (end === undefined) {
        if (final) {
          if (body.kind === "thinking") this.#events.push({ type: "thinking_end" });
          this.#consume(this.#buf.length);
        }
        return;
      }
      if (body.kind === "thinking") this.#events.push({ type: "thinking_end" });
      this.#consume(this.#sent + (body.kind === "call" ? end.at : 0) + end.length);
      this.#body = undefined;
    }
  }

  /** Reads a message header: its channel and recipient decide what the body is. */
  #open(header: string, headerLength: number): Body {
    const r = this.#r;
    const recipient = r.recipient.exec(header)?.[1];
    const channel = r.channel.exec(header)?.[1];
    if (recipient !== undefined) {
      if (!recipient.startsWith(r.functions)) return { kind: "dropped" };
      return {
        kind: "call",
        name: recipient.slice(r.functions.length),
        headerLength,
        stream: new CallStream(this.#tools, () => this.#calls++),
      };
    }
    return { kind: channel === r.thinkingChannel ? "thinking" : "text" };
  }

  #consume(n: number): void {
    this.#buf = this.#buf.slice(n);
    this.#consumed += n;
    this.#sent = 0;
  }
}
