/**
 * `strict: true` on a response format: the grammar must guarantee the schema, so a keyword it
 * does not enforce (`pattern`, `format`, `multipleOf`, ...), a bound past the grammar's own
 * (`minItems` over its array bound, nesting past its depth) or a typed `additionalProperties`
 * without `properties` is refused instead of ignored. String lengths and number ranges are held
 * exactly by the grammar itself, strict or not (json-schema-bounds.ts refuses what it can't hold). Without `strict`, such keywords are best
 * effort: the answer is valid JSON of the schema's shape but may not honour them.
 */

import { isPlainObject } from "../json-text.ts";
import { JSON_GRAMMAR_LIMITS as L, SchemaGrammarError } from "./json-schema-grammar.ts";

/** Keywords the grammar enforces, or that constrain nothing (annotations). */
const ENFORCED = new Set([
  "type",
  "properties",
  "required",
  "items",
  "prefixItems",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "allOf",
  "$ref",
  "$defs",
  "definitions",
  "additionalProperties",
  "nullable",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "description",
  "title",
  "default",
  "examples",
  "$schema",
  "$id",
  "$comment",
  "deprecated",
  "readOnly",
  "writeOnly",
]);

/** Throws a SchemaGrammarError naming the first keyword under `path` the grammar cannot guarantee. */
export function checkStrictSchema(schema: unknown, path: string, param: string): void {
  walk(schema, path, 0, param);
}

function walk(schema: unknown, path: string, depth: number, param: string): void {
  if (typeof schema === "boolean") return;
  if (!isPlainObject(schema)) throw new SchemaGrammarError(`${path}: a schema must be an object`, param);
  const refuse = (key: string, why: string): never => {
    throw new SchemaGrammarError(`${path}.${key}: ${why} (strict: true); drop it or set strict to false`, param);
  };
  if (depth > L.maxDepth) refuse("properties", `nesting deeper than ${L.maxDepth} is not served`);
  for (const [key, value] of Object.entries(schema)) {
    if (!ENFORCED.has(key)) refuse(key, "this keyword is not enforced by the grammar");
    if (key === "minItems" && typeof value === "number" && value > L.maxArrayItems)
      refuse(key, `arrays have at most ${L.maxArrayItems} items`);
  }
  const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
  if (isPlainObject(schema.additionalProperties) && properties === undefined)
    refuse("additionalProperties", "a schema for additional properties is not enforced");
  for (const [name, sub] of Object.entries(properties ?? {})) walk(sub, `${path}.properties.${name}`, depth + 1, param);
  const items = schema.items;
  if (Array.isArray(items)) for (const [i, sub] of items.entries()) walk(sub, `${path}.items.${i}`, depth + 1, param);
  else if (items !== undefined) walk(items, `${path}.items`, depth + 1, param);
  for (const key of ["prefixItems", "anyOf", "oneOf", "allOf"]) {
    const list = schema[key];
    if (Array.isArray(list))
      for (const [i, sub] of list.entries())
        walk(sub, `${path}.${key}.${i}`, key === "prefixItems" ? depth + 1 : depth, param);
  }
  for (const key of ["$defs", "definitions"]) {
    const defs = schema[key];
    if (isPlainObject(defs))
      for (const [name, sub] of Object.entries(defs)) walk(sub, `${path}.${key}.${name}`, depth, param);
  }
}
