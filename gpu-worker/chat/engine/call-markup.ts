/**
 * Two of the three things derived from a family's `CallFormat`: the markup a grammar forces
 * (`ToolCallMarkup`, grammar/tool-grammar.ts) and the rendering of a past call in the prompt.
 * The third, the streaming reader, is parse/span-reader.ts.
 */
import { type CallFormat, MAX_PARALLEL_CALLS, writtenText } from "../call-format.ts";
import type { ToolCallMarkup } from "../grammar/tool-grammar.ts";
import { type XmlParameterMarkup, xmlArgumentsGrammar, xmlArgumentsText } from "../grammar/xml-grammar.ts";
import { isPlainObject, tryParseJson } from "../json-text.ts";
import { parameterValueText } from "../parse/xml-arguments.ts";
import { type Part, toolInputText } from "./content.ts";

/** The text of a call up to its name, the name as written, and from the name to the arguments. */
interface CallHead {
  beforeName: string;
  name: (name: string) => string;
  afterName: string;
  /** After the arguments. */
  close: string;
}

function callHead(format: CallFormat): CallHead {
  const { call } = format;
  const args = format.arguments;
  if (args.kind === "json-envelope") {
    return {
      beforeName: `${call.open}{${JSON.stringify(args.nameKey)}: `,
      name: (name) => JSON.stringify(name),
      afterName: `, ${JSON.stringify(args.argumentsKey)}: `,
      close: `}${call.close}`,
    };
  }
  return {
    beforeName: `${call.open}${writtenText(call.beforeName)}`,
    name: (name) => name,
    afterName: writtenText(call.afterName),
    close: call.close,
  };
}

/** The parameter markup of XML arguments, for the grammar and for fixed calls. */
export function xmlParameterMarkup(family: string, format: CallFormat): XmlParameterMarkup | undefined {
  const args = format.arguments;
  if (args.kind !== "xml") return undefined;
  return {
    family,
    open: (key) => `${args.key.open}${key}${args.key.close}`,
    close: args.valueClose,
    reserved: args.reserved,
  };
}

/** What a grammar forces for this family's calls. */
export function toolCallMarkup(family: string, format: CallFormat): ToolCallMarkup {
  const head = callHead(format);
  const markup: ToolCallMarkup = {
    thinkingClose: format.thinking.forcedClose,
    blockOpen: format.section?.open ?? "",
    blockClose: format.section?.close ?? "",
    separator: format.separator,
    callOpen: (name) => `${head.beforeName}${head.name(name)}${head.afterName}`,
    callClose: head.close,
  };
  const xml = xmlParameterMarkup(family, format);
  if (xml !== undefined) {
    markup.argumentsGrammar = (json, tool) => xmlArgumentsGrammar(xml, json, tool);
    markup.stringsWithoutAngle = true;
    markup.argumentsText = (argumentsJson) => xmlArgumentsText(xml, argumentsJson);
  }
  if (format.textOpen !== undefined) markup.textOpen = format.textOpen;
  return markup;
}

export const maxCallsPerTurn = (format: CallFormat): number => format.maxPerTurn ?? MAX_PARALLEL_CALLS;

/** A past call as the family renders it: markup as template text, name and arguments as content. */
export function callParts(format: CallFormat, name: string, inputJson: string): Part[] {
  const head = callHead(format);
  const parts: Part[] = [{ template: head.beforeName }, { content: head.name(name) }, { template: head.afterName }];
  const args = format.arguments;
  if (args.kind === "xml") {
    const parsed = tryParseJson(toolInputText(inputJson));
    const values = parsed !== undefined && isPlainObject(parsed.value) ? parsed.value : {};
    for (const [key, value] of Object.entries(values))
      parts.push(
        { template: args.key.open },
        { content: key },
        { template: args.key.close },
        { content: parameterValueText(value) },
        { template: args.valueClose },
      );
  } else parts.push({ content: toolInputText(inputJson) });
  parts.push({ template: head.close });
  return parts.filter((p) => !("template" in p) || p.template !== "");
}
