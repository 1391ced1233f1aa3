/** Pure JSON Schema helpers of the grammar converter (json-schema-grammar.ts). */
import { isPlainObject } from "../json-text.ts";

type Schema = Record<string, unknown>;

export function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  let node: unknown = root;
  for (const raw of ref
    .slice(1)
    .split("/")
    .filter((p) => p !== "")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isPlainObject(node)) return undefined;
    node = node[key];
  }
  return node;
}

/** Shallow merge of allOf parts: properties and required are unioned, other keys first wins. */
export function mergeAll(parts: unknown[]): Schema {
  const out: Schema = {};
  const properties: Schema = {};
  const required: string[] = [];
  for (const part of parts) {
    if (!isPlainObject(part)) continue;
    for (const [k, v] of Object.entries(part)) {
      if (k === "properties" && isPlainObject(v)) Object.assign(properties, v);
      else if (k === "required" && Array.isArray(v))
        required.push(...v.filter((r): r is string => typeof r === "string"));
      else if (!(k in out)) out[k] = v;
    }
  }
  if (Object.keys(properties).length > 0) out.properties = properties;
  if (required.length > 0) out.required = [...new Set(required)];
  return out;
}
