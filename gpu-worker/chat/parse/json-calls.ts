/**
 * Span readers for calls whose arguments are JSON, built from a family's `CallFormat`:
 * - one call per span, name and arguments in one JSON envelope (Hermes:
 *   `<tool_call>\n{"name": …, "arguments": {…}}\n</tool_call>`), read loosely (any spacing, and
 *   once the span closes also another key order or stringified arguments);
 * - a section of calls, each `open` NAME-markup {arguments} `close` (DeepSeek's calls block), the
 *   name markup read exactly (markup-patterns.ts).
 */
import { type CallFormat, lastTag, writtenText } from "../call-format.ts";
import { isPlainObject, tryParseJson } from "../json-text.ts";
import { jsonArgumentsCall, type SpanCall, type SpanParser, type SpanReading } from "./call-stream.ts";
import { escapeRegExp, exact, nameBefore } from "./markup-patterns.ts";
import { safeCut } from "./tagged-parser.ts";

const JSON_STRING = '("(?:[^"\\\\\\n]|\\\\.)*")';

/** Reads one enveloped call: `{"<nameKey>": ..., "<argumentsKey>": {...}}` inside the call tags, arguments streamed. */
export function envelopeReader(format: CallFormat, nameKey: string, argumentsKey: string): SpanParser {
  const open = format.call.open.trim();
  const close = lastTag(format.call.close);
  const key = (k: string): string => `${escapeRegExp(JSON.stringify(k))}\\s*:\\s*`;
  const head = new RegExp(
    `^${escapeRegExp(open)}\\s*\\{\\s*${key(nameKey)}${JSON_STRING}\\s*,\\s*${key(argumentsKey)}(?=\\{)`,
  );
  return (span) => {
    const at = span.indexOf(close, open.length);
    const end = at < 0 ? undefined : at + close.length;
    const body = at < 0 ? span : span.slice(0, at);
    const match = head.exec(body);
    if (match === null) {
      // Another key order or stringified arguments: read whole once the span closes.
      const whole = end === undefined ? undefined : wholeCall(body.slice(open.length), end, nameKey, argumentsKey);
      return { calls: whole ? [whole] : [], end };
    }
    const call = jsonArgumentsCall(JSON.parse(match[1] as string) as string, body, 0, match[0].length);
    const after = call.rawEnd === undefined ? "" : body.slice(call.rawEnd);
    // What follows the arguments: the envelope's "}", then the close tag (maybe still arriving).
    const rest = end === undefined ? after.slice(0, safeCut(after, close)) : after;
    const restOk = /^\s*\}?\s*$/.test(rest);
    return {
      calls: [
        {
          ...call,
          done: call.done && end !== undefined && /^\s*\}\s*$/.test(rest),
          broken: call.broken || !restOk,
          rawEnd: end,
        },
      ],
      end,
    };
  };
}

function wholeCall(inner: string, end: number, nameKey: string, argumentsKey: string): SpanCall | undefined {
  const parsed = tryParseJson(inner.trim());
  if (parsed === undefined || !isPlainObject(parsed.value)) return undefined;
  const name = parsed.value[nameKey];
  let args = parsed.value[argumentsKey];
  if (typeof args === "string") args = tryParseJson(args)?.value;
  if (typeof name !== "string" || name === "" || !isPlainObject(args)) return undefined;
  return { name, args: JSON.stringify(args), closing: "", done: true, broken: false, rawStart: 0, rawEnd: end };
}

/** Reads a section of calls (`section.open` … `section.close`); each call's arguments stream. */
export function sectionReader(format: CallFormat, section: { open: string; close: string }): SpanParser {
  const { call } = format;
  const name = nameBefore(writtenText(call.afterName));
  const head = new RegExp(`^${escapeRegExp(call.open)}${exact(call.beforeName)}${name}${exact(call.afterName)}`);
  return (span) => readSection(span, section, head, call.close);
}

function readSection(span: string, section: { open: string; close: string }, head: RegExp, tail: string): SpanReading {
  const calls: SpanCall[] = [];
  let at = section.open.length;
  for (;;) {
    while (at < span.length && /\s/.test(span[at] as string)) at++;
    const rest = span.slice(at);
    if (rest.startsWith(section.close)) return { calls, end: at + section.close.length };
    const match = head.exec(rest);
    if (match === null) {
      // Not a call (yet): the section closes at its end tag; anything else in it is dropped.
      const close = span.indexOf(section.close, at);
      return { calls, end: close < 0 ? undefined : close + section.close.length };
    }
    const call = jsonArgumentsCall((match[1] ?? "").trim(), span, at, at + match[0].length);
    if (call.rawEnd === undefined) return { calls: [...calls, call], end: undefined };
    const after = span.slice(call.rawEnd);
    if (after.startsWith(tail)) {
      at = call.rawEnd + tail.length;
      calls.push({ ...call, rawEnd: at });
      continue;
    }
    const close = span.indexOf(section.close, call.rawEnd);
    if (tail.startsWith(after) && close < 0) return { calls: [...calls, { ...call, done: false }], end: undefined };
    calls.push({ ...call, done: false, broken: true });
    return { calls, end: close < 0 ? undefined : close + section.close.length };
  }
}
