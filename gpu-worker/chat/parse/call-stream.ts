/**
 * Streaming of tool calls, shared by every format's parser. A format describes only how to read
 * its call markup: a `SpanParser` reads the text of one tool span (open tag included) as far as
 * it has arrived and says which calls it holds so far. `CallStream` turns successive readings into
 * `tool_call_start` / `tool_call_args` / `tool_call_end` events.
 */

import type { GrammarTool, OutputEvent, ToolCallStatus } from "../types.ts";
import { scanJsonObject } from "./json-prefix.ts";

/** One call of a span, as far as it has been read. Reported only once its name is complete. */
export interface SpanCall {
  name: string;
  /** Arguments JSON that may be streamed now; each reading extends the previous one. */
  args: string;
  /** Closes `args` into an object if the call ends here. */
  closing: string;
  /** The call's markup closed and its arguments are complete. */
  done: boolean;
  /** The call's markup or arguments broke: it ends here as `malformed`. */
  broken: boolean;
  /** Where the call's text starts in the span, and ends once done. */
  rawStart: number;
  rawEnd: number | undefined;
}

export interface SpanReading {
  calls: SpanCall[];
  /** The span closed: its length, close tag included. */
  end: number | undefined;
}

export type SpanParser = (span: string, tools: ToolSchemas) => SpanReading;

/** The request's tools by name (their parsed JSON schemas); undefined: any name is accepted. */
export type ToolSchemas = ReadonlyMap<string, unknown> | undefined;

export function toolSchemas(tools: readonly GrammarTool[] | undefined): ToolSchemas {
  if (tools === undefined) return undefined;
  return new Map(
    tools.map((t) => {
      try {
        return [t.name, JSON.parse(t.inputSchemaJson) as unknown] as const;
      } catch {
        return [t.name, {}] as const;
      }
    }),
  );
}

/** A call whose arguments are the JSON object starting at `from` in `span`. */
export function jsonArgumentsCall(name: string, span: string, rawStart: number, from: number): SpanCall {
  let start = from;
  while (start < span.length && /\s/.test(span[start] as string)) start++;
  const scan = scanJsonObject(span.slice(start));
  return {
    name,
    args: span.slice(start, start + scan.safeEnd),
    closing: scan.closing,
    done: scan.end !== undefined,
    broken: scan.errorAt !== undefined,
    rawStart,
    rawEnd: scan.end === undefined ? undefined : start + scan.end,
  };
}

interface Started {
  index: number;
  name: string;
  sent: string;
  ended: boolean;
}

/** Emits the events of one span from successive readings. Call indices count across the turn. */
export class CallStream {
  readonly #started = new Map<number, Started>();

  constructor(
    private readonly tools: ToolSchemas,
    private readonly nextIndex: () => number,
  ) {}

  /** Events for a new reading of the span (which starts at `offset` of the whole output). */
  update(span: string, reading: SpanReading, offset: number, final: boolean): OutputEvent[] {
    const out: OutputEvent[] = [];
    const closed = reading.end !== undefined;
    reading.calls.forEach((call, local) => {
      let started = this.#started.get(local);
      if (started === undefined) {
        if (this.tools !== undefined && !this.tools.has(call.name)) return; // unknown tool: dropped
        started = { index: this.nextIndex(), name: call.name, sent: "", ended: false };
        this.#started.set(local, started);
        out.push({ type: "tool_call_start", index: started.index, name: call.name });
      }
      if (started.ended) return;
      // Readings only ever extend what was sent; anything else is never streamed.
      if (call.args.startsWith(started.sent) && call.args.length > started.sent.length) {
        out.push({ type: "tool_call_args", index: started.index, text: call.args.slice(started.sent.length) });
        started.sent = call.args;
      }
      const status: ToolCallStatus | undefined = call.done
        ? "complete"
        : call.broken || closed
          ? "malformed"
          : final
            ? "truncated"
            : undefined;
      if (status === undefined) return;
      let tail = status === "complete" ? "" : call.closing;
      if (started.sent === "" && tail === "") tail = "{}";
      if (tail !== "") out.push({ type: "tool_call_args", index: started.index, text: tail });
      started.ended = true;
      const raw = span.slice(call.rawStart, call.rawEnd ?? span.length);
      out.push({
        type: "tool_call_end",
        index: started.index,
        name: started.name,
        argumentsJson: started.sent + tail,
        status,
        raw,
        offset: offset + call.rawStart,
      });
    });
    return out;
  }

  /** How many calls of this span were started (known tools). */
  get count(): number {
    return this.#started.size;
  }
}
