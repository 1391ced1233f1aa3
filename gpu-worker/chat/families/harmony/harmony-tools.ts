/**
 * gpt-oss's tool listing: each function's parameters as a TypeScript type inside
 * `namespace functions { … }`, as its chat template writes them.
 */
import type { ToolDefinition } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { canonicalJson, isPlainObject, tryParseJson } from "../../json-text.ts";

type Schema = Record<string, unknown>;

const nullable = (s: Schema): string => (s.nullable === true ? " | null" : "");

/** A JSON schema as a TypeScript type. */
function typeOf(s: Schema): string {
  const type = s.type;
  if (type === "array") {
    if (!isPlainObject(s.items)) return `any[]${nullable(s)}`;
    const itemType = s.items.type;
    const simple: Record<string, string> = {
      string: "string[]",
      number: "number[]",
      integer: "number[]",
      boolean: "boolean[]",
    };
    if (typeof itemType === "string" && simple[itemType] !== undefined) return `${simple[itemType]}${nullable(s)}`;
    const inner = typeOf(s.items);
    return `${inner === "object | object" || inner.length > 50 ? "any[]" : `${inner}[]`}${nullable(s)}`;
  }
  if (Array.isArray(type) && type.length > 0) return type.map(String).join(" | ");
  if (Array.isArray(s.oneOf)) {
    const variants = s.oneOf.filter(isPlainObject);
    if (variants.some((v) => v.type === "object") && variants.length > 1) return "any";
    return variants.map((v) => typeOf(v)).join(" | ");
  }
  if (type === "string") {
    if (Array.isArray(s.enum) && s.enum.length > 0) return `"${s.enum.map(String).join('" | "')}"`;
    return `string${nullable(s)}`;
  }
  if (type === "number" || type === "integer") return "number";
  if (type === "boolean") return "boolean";
  if (type === "object") {
    if (!isPlainObject(s.properties) || Object.keys(s.properties).length === 0) return "object";
    const required = Array.isArray(s.required) ? s.required : [];
    const props = Object.entries(s.properties).map(
      ([name, prop]) => `${name}${required.includes(name) ? "" : "?"}: ${typeOf(isPlainObject(prop) ? prop : {})}`,
    );
    return `{\n${props.join(", ")}}`;
  }
  return "any";
}

function functionType(tool: ToolDefinition): string {
  const parsed = tryParseJson(tool.inputSchemaJson)?.value;
  const schema = isPlainObject(parsed) ? parsed : {};
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  if (Object.keys(properties).length === 0) return "() => any;\n\n";
  const required = Array.isArray(schema.required) ? schema.required : [];
  let out = "(_: {\n";
  for (const [name, property] of Object.entries(properties)) {
    const p = isPlainObject(property) ? property : {};
    if (typeof p.description === "string" && p.description !== "") out += `// ${p.description}\n`;
    out += `${name}${required.includes(name) ? "" : "?"}: ${typeOf(p)}`;
    if ("default" in p)
      out += Array.isArray(p.enum) ? `, // default: ${String(p.default)}` : `, // default: ${canonicalJson(p.default)}`;
    out += ",\n";
  }
  return `${out}}) => any;\n\n`;
}

/** `## functions\n\nnamespace functions {\n\n// {description}\ntype {name} = …;\n\n} // namespace functions` */
export function harmonyToolNamespace(tools: readonly ToolDefinition[]): string {
  let out = "## functions\n\nnamespace functions {\n\n";
  for (const tool of tools) out += `// ${tool.description}\ntype ${tool.name} = ${functionType(tool)}`;
  return `${out}} // namespace functions`;
}
