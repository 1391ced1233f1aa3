/**
 * Gemini's `Schema` (an OpenAPI 3.0 subset: `type` as an enum name such as `OBJECT`, `nullable`,
 * 64-bit integers as strings) → the JSON Schema the worker builds its grammars from. Used for
 * `functionDeclarations[].parameters` and `generationConfig.responseSchema`; `parametersJsonSchema`
 * and `responseJsonSchema` are JSON Schema already and pass through as sent. Keywords the grammar
 * reads are kept (type, properties, required, items, enum, anyOf, format, bounds, pattern,
 * description, title, default); presentation-only ones (`propertyOrdering`, `example`) are dropped,
 * as are unknown ones.
 */
import { asArray, asBoolean, asObject, asString, fail, optional, type Path } from "../../../core/check.ts";

const TYPES = ["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"] as const;
/** Keywords copied as they are (after a shape check) once converted. */
const COUNTS = ["minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties"] as const;
const NUMBERS = ["minimum", "maximum"] as const;
const STRINGS = ["format", "description", "title", "pattern"] as const;

export function toJsonSchema(value: unknown, path: Path): Record<string, unknown> {
  const schema = asObject(value, path);
  const out: Record<string, unknown> = {};
  const type = optional(schema, "type");
  const nullable = optional(schema, "nullable");
  const isNullable = nullable !== undefined && asBoolean(nullable, [...path, "nullable"]);
  if (type !== undefined) {
    const name = asString(type, [...path, "type"]).toUpperCase();
    if (name !== "TYPE_UNSPECIFIED") {
      if (!(TYPES as readonly string[]).includes(name)) {
        fail([...path, "type"], `Input should be one of ${TYPES.join(", ")}`);
      }
      const lower = name.toLowerCase();
      out.type = isNullable && lower !== "null" ? [lower, "null"] : lower;
    }
  }
  for (const key of STRINGS) {
    const v = optional(schema, key);
    if (v !== undefined) out[key] = asString(v, [...path, key]);
  }
  for (const key of COUNTS) {
    const v = optional(schema, key);
    if (v !== undefined) out[key] = count(v, [...path, key]);
  }
  for (const key of NUMBERS) {
    const v = optional(schema, key);
    if (v !== undefined) out[key] = number(v, [...path, key]);
  }
  const enumValues = optional(schema, "enum");
  if (enumValues !== undefined) {
    out.enum = asArray(enumValues, [...path, "enum"]).map((v, i) => asString(v, [...path, "enum", i]));
    if (isNullable) (out.enum as unknown[]).push(null);
  }
  const defaultValue = optional(schema, "default");
  if (defaultValue !== undefined) out.default = defaultValue;
  const properties = optional(schema, "properties");
  if (properties !== undefined) {
    const props = asObject(properties, [...path, "properties"]);
    out.properties = Object.fromEntries(
      Object.entries(props).map(([name, sub]) => [name, toJsonSchema(sub, [...path, "properties", name])]),
    );
  }
  const required = optional(schema, "required");
  if (required !== undefined) {
    out.required = asArray(required, [...path, "required"]).map((v, i) => asString(v, [...path, "required", i]));
  }
  const items = optional(schema, "items");
  if (items !== undefined) out.items = toJsonSchema(items, [...path, "items"]);
  const anyOf = optional(schema, "anyOf");
  if (anyOf !== undefined) {
    const branches = asArray(anyOf, [...path, "anyOf"]).map((sub, i) => toJsonSchema(sub, [...path, "anyOf", i]));
    out.anyOf = isNullable && out.type === undefined ? [...branches, { type: "null" }] : branches;
  }
  return out;
}

/** A non-negative count; proto3 JSON writes int64 as a string ("3"). */
function count(value: unknown, path: Path): number {
  const n = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) fail(path, "Input should be a non-negative integer");
  return n;
}

function number(value: unknown, path: Path): number {
  if (typeof value !== "number" || !Number.isFinite(value)) fail(path, "Input should be a valid number");
  return value;
}

/** Keywords whose value is a schema, a list of schemas, or a map of them (where `type` is rewritten). */
const SUBSCHEMA = ["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SUBSCHEMA_MAPS = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];

/**
 * A JSON Schema as a client sent it (`parametersJsonSchema`, `responseJsonSchema`), with Gemini's
 * upper-case type names (`"OBJECT"`, which Gemini accepts there and Gemini CLI sends) lower-cased;
 * nothing else changes.
 */
export function withJsonSchemaTypes(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  const type = out.type;
  if (typeof type === "string") out.type = typeName(type);
  else if (Array.isArray(type)) out.type = type.map((t) => (typeof t === "string" ? typeName(t) : t));
  const sub = (value: unknown) => (isSchema(value) ? withJsonSchemaTypes(value) : value);
  for (const key of SUBSCHEMA) if (key in out) out[key] = sub(out[key]);
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(sub);
  for (const key of SUBSCHEMA_MAPS) {
    const map = out[key];
    if (isSchema(map)) out[key] = Object.fromEntries(Object.entries(map).map(([name, s]) => [name, sub(s)]));
  }
  return out;
}

function typeName(type: string): string {
  return (TYPES as readonly string[]).includes(type) ? type.toLowerCase() : type;
}

function isSchema(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
