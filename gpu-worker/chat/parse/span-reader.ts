/** The streaming parser of a tagged family, derived from its `CallFormat`. */
import type { CallFormat } from "../call-format.ts";
import type { SpanParser } from "./call-stream.ts";
import { envelopeReader, sectionReader } from "./json-calls.ts";
import type { TagMarkup } from "./tagged-parser.ts";
import { xmlReader, xmlSectionReader } from "./xml-calls.ts";

/** How one tool span of this format reads. */
export function spanReader(format: CallFormat): SpanParser {
  const args = format.arguments;
  if (format.section !== undefined) {
    if (args.kind === "xml") return xmlSectionReader(format, format.section, args.key, args.valueClose);
    if (args.kind !== "json") throw new RangeError("a call section holds JSON-argument or XML-parameter calls");
    return sectionReader(format, format.section);
  }
  switch (args.kind) {
    case "json-envelope":
      return envelopeReader(format, args.nameKey, args.argumentsKey);
    case "xml":
      return xmlReader(format, args.key, args.valueClose);
    case "json":
      throw new RangeError("JSON-argument calls are read in a section (or by a hand-written parser)");
  }
}

/** What the tagged parser looks for: thinking markers and the tag that opens a tool span. */
export function tagMarkup(format: CallFormat): TagMarkup {
  const { thinking } = format;
  const markup: TagMarkup = {
    thinkClose: thinking.close,
    spanOpen: (format.section?.open ?? format.call.open).trim(),
    readSpan: spanReader(format),
  };
  if (thinking.modelOpens) markup.thinkOpen = thinking.open;
  return markup;
}
