/**
 * Grammars and fixed text for arguments written as one tagged value per parameter (Qwen3-Coder,
 * GLM): the tool's required parameters in schema order, string values as raw bounded text (or one
 * of their enum values), any other value as JSON under its schema.
 */
import { gbnfLiteral } from "./gbnf.ts";
import type { JsonSchemaGrammar } from "./json-schema-grammar.ts";
import { isPlainObject, tryParseJson } from "./json-text.ts";
import type { GrammarTool } from "./types.ts";
import { parameterValueText } from "./xml-arguments.ts";

export interface XmlParameterMarkup {
  /** Text before a parameter's value. */
  open(key: string): string;
  /** Text after a parameter's value. */
  close: string;
}

/** Raw text of a string parameter: short, without the markup's "<" or newlines. */
const XML_TEXT = "[a-zA-Z0-9_./-] [a-zA-Z0-9 _./-]{0,23}";

export function xmlArgumentsGrammar(markup: XmlParameterMarkup, json: JsonSchemaGrammar, tool: GrammarTool): string {
  const parsed = tryParseJson(tool.inputSchemaJson);
  const schema = parsed !== undefined && isPlainObject(parsed.value) ? parsed.value : {};
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [];
  const parts = Object.entries(properties)
    .filter(([key]) => required.includes(key))
    .map(([key, property]) => {
      const value = xmlValue(json, property, `${tool.name}-${key}`);
      return `${gbnfLiteral(markup.open(key))} ${value} ${gbnfLiteral(markup.close)}`;
    });
  return parts.length === 0 ? '""' : json.rules.add(`${tool.name}-params`, parts.join(" "));
}

function xmlValue(json: JsonSchemaGrammar, property: unknown, hint: string): string {
  const p = isPlainObject(property) ? property : {};
  if (Array.isArray(p.enum) && p.enum.length > 0 && p.enum.every((v) => typeof v === "string"))
    return `(${p.enum.map((v) => gbnfLiteral(v as string)).join(" | ")})`;
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
