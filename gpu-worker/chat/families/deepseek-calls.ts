/**
 * DeepSeek's tool-call block, shared by `deepseek` (V3/R1, DSML-style ```json bodies) and
 * `deepseek-v3.1` (bare JSON):
 *   <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>{head}<｜tool▁sep｜>...{args}...<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
 */
import { jsonArgumentsCall, type SpanCall, type SpanReading } from "../parse/call-stream.ts";

export const CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
export const CALLS_END = "<｜tool▁calls▁end｜>";
export const CALL_BEGIN = "<｜tool▁call▁begin｜>";
export const CALL_END = "<｜tool▁call▁end｜>";
export const TOOL_SEP = "<｜tool▁sep｜>";

export interface CallShape {
  /** Matches a call's start up to its arguments; group 1 is the tool name. */
  head: RegExp;
  /** Between the arguments and CALL_END. */
  afterArgs: string;
}

/** Reads a block of calls; each call's arguments stream. */
export function readDeepSeekBlock(span: string, shape: CallShape): SpanReading {
  const calls: SpanCall[] = [];
  let at = CALLS_BEGIN.length;
  for (;;) {
    while (at < span.length && /\s/.test(span[at] as string)) at++;
    const rest = span.slice(at);
    if (rest.startsWith(CALLS_END)) return { calls, end: at + CALLS_END.length };
    const head = shape.head.exec(rest);
    if (head === null) {
      // Not a call (yet): the block closes at its end tag; anything else in it is dropped.
      const close = span.indexOf(CALLS_END, at);
      return { calls, end: close < 0 ? undefined : close + CALLS_END.length };
    }
    const call = jsonArgumentsCall((head[1] ?? "").trim(), span, at, at + head[0].length);
    if (call.rawEnd === undefined) return { calls: [...calls, call], end: undefined };
    const tail = `${shape.afterArgs}${CALL_END}`;
    const after = span.slice(call.rawEnd);
    if (after.startsWith(tail)) {
      at = call.rawEnd + tail.length;
      calls.push({ ...call, rawEnd: at });
      continue;
    }
    const close = span.indexOf(CALLS_END, call.rawEnd);
    if (tail.startsWith(after) && close < 0) return { calls: [...calls, { ...call, done: false }], end: undefined };
    calls.push({ ...call, done: false, broken: true });
    return { calls, end: close < 0 ? undefined : close + CALLS_END.length };
  }
}
