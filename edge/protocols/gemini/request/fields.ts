/**
 * Google's JSON APIs accept every field in lowerCamelCase (what @google/genai sends) and in its
 * proto's snake_case (what many REST examples use): `generationConfig` or `generation_config`.
 * `field` reads either spelling of one known field; free-form objects (a call's `args`, a
 * function's `response`, JSON Schemas) are never renamed.
 */
import { optional } from "../../../core/check.ts";

function snake(camel: string): string {
  return camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** `object[key]`, or its snake_case spelling; JSON null counts as absent. */
export function field(object: Record<string, unknown>, key: string): unknown {
  return optional(object, key) ?? optional(object, snake(key));
}
