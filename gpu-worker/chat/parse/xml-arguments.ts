/**
 * Arguments written as one tagged value per parameter (Qwen3-Coder's `<parameter=k>`, GLM's
 * `<arg_key>`/`<arg_value>`), read into a JSON object by each parameter's JSON-schema type: a
 * string parameter's value is the raw text, any other value is JSON (raw text when it does not
 * parse). A string value streams as it arrives; other values join when complete.
 */

import { canonicalJson, isPlainObject, tryParseJson } from "../json-text.ts";
import type { SpanCall, ToolSchemas } from "./call-stream.ts";
import { safeCut } from "./tagged-parser.ts";

export interface XmlParameter {
  key: string;
  /** The value text so far (framing newlines excluded). */
  value: string;
  complete: boolean;
}

/** The JSON-schema type(s) of a tool parameter. */
function parameterTypes(schemas: ToolSchemas, tool: string, key: string): string[] {
  const schema = schemas?.get(tool);
  const properties = isPlainObject(schema) ? schema.properties : undefined;
  const property = isPlainObject(properties) ? properties[key] : undefined;
  const type = isPlainObject(property) ? property.type : undefined;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === "string");
  return [];
}

/** Whether a parameter is read as raw text: typed string, or untyped. */
export function isStringParameter(schemas: ToolSchemas, tool: string, key: string): boolean {
  const types = parameterTypes(schemas, tool, key);
  return types.length === 0 || types.includes("string");
}

/** A complete value as JSON: raw text for string parameters, parsed JSON otherwise. */
export function parameterValueJson(schemas: ToolSchemas, tool: string, key: string, value: string): string {
  if (isStringParameter(schemas, tool, key)) return JSON.stringify(value);
  const parsed = tryParseJson(value.trim());
  return parsed === undefined ? JSON.stringify(value) : JSON.stringify(parsed.value);
}

/** How a format renders a value back into its markup: strings raw, anything else as JSON. */
export function parameterValueText(value: unknown): string {
  return typeof value === "string" ? value : canonicalJson(value);
}

/** The call as far as its parameters have arrived. `closeTag` ends a value (held back while partial). */
export function xmlArgumentsCall(
  schemas: ToolSchemas,
  name: string,
  parameters: readonly XmlParameter[],
  closeTag: string,
  state: { done: boolean; broken: boolean; rawEnd: number | undefined },
): SpanCall {
  const members: string[] = [];
  let partial = "";
  for (const p of parameters) {
    if (p.complete) members.push(`${JSON.stringify(p.key)}:${parameterValueJson(schemas, name, p.key, p.value)}`);
    else if (isStringParameter(schemas, name, p.key)) {
      const text = p.value.slice(0, safeCut(p.value, closeTag));
      partial = `${JSON.stringify(p.key)}:${JSON.stringify(text).slice(0, -1)}`;
    }
  }
  const body = members.join(",");
  const args = partial === "" ? `{${body}` : `{${body}${body === "" ? "" : ","}${partial}`;
  return {
    name,
    args: state.done ? `${args}}` : args,
    closing: partial === "" ? "}" : '"}',
    done: state.done,
    broken: state.broken,
    rawStart: 0,
    rawEnd: state.rawEnd,
  };
}
