/**
 * The span reader for calls whose arguments are one tagged value per parameter (Qwen3-Coder's
 * `<function=NAME><parameter=k>…</parameter></function>`, GLM's `NAME<arg_key>k</arg_key><arg_value>…`),
 * built from a family's `CallFormat`: markup read loosely (markup-patterns.ts), values read by each
 * parameter's JSON-schema type (xml-arguments.ts).
 */
import { type CallFormat, lastTag, writtenText } from "../call-format.ts";
import type { SpanParser, SpanReading, ToolSchemas } from "./call-stream.ts";
import { escapeRegExp, loose, nameBefore } from "./markup-patterns.ts";
import { type XmlParameter, xmlArgumentsCall } from "./xml-arguments.ts";

interface XmlShape {
  open: string;
  close: string;
  /** Matches the call's start up to its first parameter; group 1 is the tool name. */
  head: RegExp;
  /** The name ends at a line break: it is complete only once something follows it. */
  nameToLineEnd: boolean;
  /** Closes the parameters inside the span (`</function>`), if the markup has such a tag. */
  innerClose: string | undefined;
  /** Matches a parameter up to its value; group 1 is the key. */
  parameter: RegExp;
  valueClose: string;
  /** Whitespace the value's close writes before its tag (dropped from the value). */
  valueLead: string;
}

function xmlShape(format: CallFormat, key: { open: string; close: string }, valueClose: string): XmlShape {
  const { call } = format;
  const open = call.open.trimStart();
  const close = lastTag(call.close);
  const afterName = writtenText(call.afterName);
  const inner = call.close.trim().slice(0, -close.length).trim();
  return {
    open,
    close,
    head: new RegExp(
      `^${escapeRegExp(open)}${loose(writtenText(call.beforeName))}${nameBefore(afterName)}${loose(afterName, true)}`,
    ),
    nameToLineEnd: afterName === "",
    innerClose: inner === "" ? undefined : inner,
    parameter: new RegExp(`^${loose(key.open.trimStart())}${nameBefore(key.close)}${loose(key.close, true)}`),
    valueClose: valueClose.trim(),
    valueLead: /^\s*/.exec(valueClose)?.[0] ?? "",
  };
}

export function xmlReader(format: CallFormat, key: { open: string; close: string }, valueClose: string): SpanParser {
  const shape = xmlShape(format, key, valueClose);
  // A partial value holds back what may be the start of its close (whitespace included).
  const partialClose = valueClose.trimEnd();
  return (span, tools) => readXmlSpan(span, tools, shape, partialClose);
}

/**
 * Reads a section of XML-parameter calls (MiniMax's `<minimax:tool_call>` holding one `<invoke>` per
 * call), each call read as a span of its own; anything in the section that is not a call is dropped.
 */
export function xmlSectionReader(
  format: CallFormat,
  section: { open: string; close: string },
  key: { open: string; close: string },
  valueClose: string,
): SpanParser {
  const shape = xmlShape(format, key, valueClose);
  const partialClose = valueClose.trimEnd();
  const [open, close] = [section.open.trim(), section.close.trim()];
  return (span, tools) => {
    const calls: SpanReading["calls"] = [];
    let at = open.length;
    for (;;) {
      while (at < span.length && /\s/.test(span[at] as string)) at++;
      const rest = span.slice(at);
      if (rest.startsWith(close)) return { calls, end: at + close.length };
      if (!rest.startsWith(shape.open)) {
        // Not a call (or one still arriving): the section ends at its close tag.
        const end = span.indexOf(close, at);
        return { calls, end: end < 0 ? undefined : end + close.length };
      }
      const reading = readXmlSpan(rest, tools, shape, partialClose);
      const call = reading.calls[0];
      if (call !== undefined)
        calls.push({ ...call, rawStart: at, rawEnd: call.rawEnd === undefined ? undefined : at + call.rawEnd });
      if (reading.end === undefined) return { calls, end: undefined };
      if (call === undefined || !call.done) {
        const end = span.indexOf(close, at + reading.end);
        return { calls, end: end < 0 ? undefined : end + close.length };
      }
      at += reading.end;
    }
  };
}

function readXmlSpan(span: string, tools: ToolSchemas, shape: XmlShape, partialClose: string): SpanReading {
  const at0 = span.indexOf(shape.close, shape.open.length);
  const end = at0 < 0 ? undefined : at0 + shape.close.length;
  const body = at0 < 0 ? span : span.slice(0, at0);
  const head = shape.head.exec(body);
  if (head === null || (shape.nameToLineEnd && end === undefined && head[0].length === body.length))
    return { calls: [], end };
  const parameters: XmlParameter[] = [];
  let at = head[0].length;
  let broken = false;
  for (;;) {
    while (at < body.length && /\s/.test(body[at] as string)) at++;
    const rest = body.slice(at);
    if (rest === "") break;
    if (shape.innerClose !== undefined && rest.startsWith(shape.innerClose)) {
      broken = end !== undefined && rest.slice(shape.innerClose.length).trim() !== "";
      break;
    }
    const open = shape.parameter.exec(rest);
    if (open === null) {
      broken = end !== undefined; // still arriving until the span closes
      break;
    }
    const valueStart = at + open[0].length;
    const valueEnd = body.indexOf(shape.valueClose, valueStart);
    const key = (open[1] as string).trim();
    if (valueEnd < 0) {
      parameters.push({ key, value: body.slice(valueStart), complete: false });
      broken = end !== undefined;
      break;
    }
    let value = body.slice(valueStart, valueEnd);
    if (shape.valueLead !== "" && value.endsWith(shape.valueLead)) value = value.slice(0, -shape.valueLead.length);
    parameters.push({ key, value, complete: true });
    at = valueEnd + shape.valueClose.length;
  }
  const done = end !== undefined && !broken && parameters.every((p) => p.complete);
  const call = xmlArgumentsCall(tools, (head[1] as string).trim(), parameters, partialClose, {
    done,
    broken,
    rawEnd: end,
  });
  return { calls: [call], end };
}
