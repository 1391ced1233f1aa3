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
import { FREEFORM_INPUT_PROPERTY } from "../../../shared/lark-grammar.ts";
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

/** Raw text of a string parameter: short, without the markup's "<" or newlines. */
const XML_TEXT = "[a-zA-Z0-9_./-] [a-zA-Z0-9 _./-]{0,23}";

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
      const value = xmlValue(json, property, `${tool.name}-${key}`, (v) => checkRawValue(markup, subject, key, v));
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

function xmlValue(json: JsonSchemaGrammar, property: unknown, hint: string, check: (raw: string) => void): string {
  const p = isPlainObject(property) ? property : {};
  if (Array.isArray(p.enum) && p.enum.length > 0 && p.enum.every((v) => typeof v === "string")) {
    const values = p.enum as string[];
    for (const v of values) check(v);
    return `(${values.map((v) => gbnfLiteral(v)).join(" | ")})`;
  }
  const types = typeof p.type === "string" ? [p.type] : Array.isArray(p.type) ? p.type : [];
  if (types.length === 0 || types.includes("string")) return json.rules.define("xml-text", () => XML_TEXT);
  return json.value(p, hint);
}

/** The parameters of a fixed call, in its JSON's key order. */
export function xmlArgumentsText(markup: XmlParameterMarkup, argumentsJson: string): string {
  const parsed = tryParseJson(argumentsJson);
  if (parsed === undefined || !isPlainObject(parsed.value)) return "";
  return Object.entries(parsed.value)
    .map(([key, value]) => `${markup.open(key)}${parameterValueText(value)}${markup.close}`)
    .join("");
}
