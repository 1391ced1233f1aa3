/**
 * Grammars and fixed text for arguments written as one tagged value per parameter (Qwen3-Coder,
 * GLM): the tool's required parameters in schema order, string values as raw bounded text (or one
 * of their enum values), any other value as JSON under its schema.
 *
 * Nothing a client sends may spell the markup inside a forced call: the parser finds a value's end
 * by searching for the closing tag, so an enum value `ok</arg_value>` would end the value there and
 * forge what follows. Raw text is written verbatim (no escape the model would read back), so such
 * a value, a property name that cannot sit inside the key markup, or a tool name with markup is
 * refused (SchemaGrammarError: the client's 400 naming the tool). JSON values need no refusal:
 * their `<` is written `\u003c` and their free strings exclude `<`.
 */
import { FREEFORM_INPUT_PROPERTY } from "../../../shared/lark/lark-grammar.ts";
import { isPlainObject, tryParseJson } from "../json-text.ts";
import { parameterValueText } from "../parse/xml-arguments.ts";
import type { GrammarTool } from "../types.ts";
import { freeformInput } from "./freeform-grammar.ts";
import { gbnfLiteral } from "./gbnf.ts";
import { type JsonSchemaGrammar, SchemaGrammarError } from "./json-schema-grammar.ts";

export interface XmlParameterMarkup {
  /** The family's name, for refusals. */
  family: string;
  /** Text before a parameter's value. */
  open(key: string): string;
  /** Text after a parameter's value. */
  close: string;
  /** Every spelling a raw value may not contain: the call's tags and the family's control tokens. */
  reserved: readonly string[];
}

/** Raw text of a string parameter: short (at most this many characters unless `minLength` asks more), without the markup's "<" or newlines. */
const XML_TEXT_CHARS = 24;
const XML_FIRST = "[a-zA-Z0-9_./-]";
const XML_NEXT = "[a-zA-Z0-9 _./-]";

/** Raw text of min..max characters (max ≥ min), never starting with a space. */
function xmlText(min: number, max: number): string {
  if (max === 0) return '""';
  const rest =
    max === 1 ? "" : min <= 1 && max === 2 ? ` ${XML_NEXT}?` : ` ${XML_NEXT}{${Math.max(0, min - 1)},${max - 1}}`;
  return min === 0 ? `(${XML_FIRST}${rest})?` : `${XML_FIRST}${rest}`;
}

/** A tool name or property name the markup can hold verbatim: no `<`, `>`, line breaks or edge spaces. */
const SAFE_NAME = /^[^\s<>](?:[^<>\r\n]*[^\s<>])?$/;

export function xmlArgumentsGrammar(markup: XmlParameterMarkup, json: JsonSchemaGrammar, tool: GrammarTool): string {
  const subject = `input_schema of tool '${tool.name}'`;
  if (!SAFE_NAME.test(tool.name))
    throw new SchemaGrammarError(`tools: tool name '${tool.name}' cannot be written in ${markup.family}'s call markup`);
  const freeform = freeformInput(json.rules, tool, "xml");
  if (freeform !== undefined) {
    const open = gbnfLiteral(markup.open(FREEFORM_INPUT_PROPERTY));
    return json.rules.add(`${tool.name}-params`, `${open} ${freeform} ${gbnfLiteral(markup.close)}`);
  }
  const parsed = tryParseJson(tool.inputSchemaJson);
  const schema = parsed !== undefined && isPlainObject(parsed.value) ? parsed.value : {};
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
  const parts = Object.entries(properties)
    .filter(([key]) => required.includes(key))
    .map(([key, property]) => {
      if (!SAFE_NAME.test(key)) {
        throw new SchemaGrammarError(
          `${subject}: property name ${JSON.stringify(key)} cannot be written in ${markup.family}'s argument markup (no '<', '>', line breaks or surrounding spaces)`,
        );
      }
      const value = xmlValue(json, property, `${tool.name}-${key}`, `properties.${key}`, (v) =>
        checkRawValue(markup, subject, key, v),
      );
      return `${gbnfLiteral(markup.open(key))} ${value} ${gbnfLiteral(markup.close)}`;
    });
  return parts.length === 0 ? '""' : json.rules.add(`${tool.name}-params`, parts.join(" "));
}

function checkRawValue(markup: XmlParameterMarkup, subject: string, key: string, value: string): void {
  const spelled = markup.reserved.find((r) => value.includes(r));
  if (spelled !== undefined) {
    throw new SchemaGrammarError(
      `${subject}: enum value ${JSON.stringify(value)} of parameter '${key}' contains ${markup.family}'s markup ${JSON.stringify(spelled)}`,
    );
  }
}

function xmlValue(
  json: JsonSchemaGrammar,
  property: unknown,
  hint: string,
  path: string,
  check: (raw: string) => void,
): string {
  const p = isPlainObject(property) ? property : {};
  if (Array.isArray(p.enum) && p.enum.length > 0 && p.enum.every((v) => typeof v === "string")) {
    const values = p.enum as string[];
    for (const v of values) check(v);
    return `(${values.map((v) => gbnfLiteral(v)).join(" | ")})`;
  }
  const types = typeof p.type === "string" ? [p.type] : Array.isArray(p.type) ? p.type : [];
  if (types.length === 0 || types.includes("string")) {
    const bounds = json.stringLength(p, path, XML_TEXT_CHARS);
    // At least one character unless maxLength is 0 (a value reads back better than an empty one).
    const [min, max] = [Math.max(bounds.min, Math.min(1, bounds.max)), bounds.max];
    const name = min === 1 && max === XML_TEXT_CHARS ? "xml-text" : `xml-text-${min}-${max}`;
    return json.rules.define(name, () => xmlText(min, max));
  }
  return json.value(p, hint, p, path);
}

/** The parameters of a fixed call, in its JSON's key order. */
export function xmlArgumentsText(markup: XmlParameterMarkup, argumentsJson: string): string {
  const parsed = tryParseJson(argumentsJson);
  if (parsed === undefined || !isPlainObject(parsed.value)) return "";
  return Object.entries(parsed.value)
    .map(([key, value]) => `${markup.open(key)}${parameterValueText(value)}${markup.close}`)
    .join("");
}
