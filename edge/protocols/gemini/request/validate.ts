/**
 * Validation of a `generateContent` / `streamGenerateContent` / `countTokens` body into a typed
 * GeminiRequest. Unknown fields (`safetySettings`, `labels`, `serviceTier`, …) are accepted and
 * ignored; what Frontier does not serve (`candidateCount > 1`, log probabilities, penalties, audio
 * or image output, `cachedContent`) is refused with a 400 naming the field rather than dropped.
 * Hosted tools (`googleSearch`, `codeExecution`, `urlContext`, …) are declared but not offered: the
 * turn runs without them and says so (`x-frontier-tools-not-offered`).
 */
import { LIMITS } from "../../../../shared/limits.ts";
import {
  asArray,
  asObject,
  asString,
  fail,
  isObject,
  type Path,
  uniqueToolName,
  ValidationError,
} from "../../../core/check.ts";
import { field } from "./fields.ts";
import { validateGenerationConfig } from "./generation-config.ts";
import { toJsonSchema, withJsonSchemaTypes } from "./schema.ts";
import type { GeminiCallingMode, GeminiFunctionDeclaration, GeminiRequest, GeminiToolConfig } from "./types.ts";
import { validateContents, validateSystemInstruction } from "./validate-contents.ts";

const MODES = ["AUTO", "ANY", "NONE", "VALIDATED"] as const;

export function validateGeminiRequest(value: unknown, model: string): GeminiRequest {
  if (!isObject(value)) fail([], "The request body must be a JSON object");
  const body = value;
  if (field(body, "cachedContent") !== undefined) {
    fail(["cachedContent"], "Cached contents are not served; send the contents themselves (the live KV is reused)");
  }
  const contents = field(body, "contents") ?? fail(["contents"], "Field required");
  const system = field(body, "systemInstruction");
  const tools = field(body, "tools");
  const declared = tools === undefined ? { functions: [], notOffered: [] } : validateTools(tools);
  const toolConfig = field(body, "toolConfig");
  return {
    model,
    contents: validateContents(contents, ["contents"]),
    system: system === undefined ? [] : validateSystemInstruction(system, ["systemInstruction"]),
    functions: declared.functions,
    toolsNotOffered: declared.notOffered,
    toolConfig:
      toolConfig === undefined
        ? { mode: "AUTO", allowedFunctionNames: [] }
        : validateToolConfig(toolConfig, declared.functions),
    generation: validateGenerationConfig(field(body, "generationConfig")),
  };
}

/**
 * `countTokens` takes `contents` alone or a whole `generateContentRequest` (with its system
 * instruction and tools, counted too).
 */
export function validateCountTokensRequest(value: unknown, model: string): GeminiRequest {
  if (!isObject(value)) fail([], "The request body must be a JSON object");
  const inner = field(value, "generateContentRequest");
  if (inner === undefined) return validateGeminiRequest(value, model);
  if (field(value, "contents") !== undefined) {
    fail(["contents"], "Send either contents or generateContentRequest, not both");
  }
  const request = asObject(inner, ["generateContentRequest"]);
  try {
    return validateGeminiRequest(request, model);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(["generateContentRequest", ...error.path], error.detail);
  }
}

function validateTools(value: unknown): { functions: GeminiFunctionDeclaration[]; notOffered: string[] } {
  const functions: GeminiFunctionDeclaration[] = [];
  const notOffered: string[] = [];
  const names = new Set<string>();
  asArray(value, ["tools"]).forEach((entry, i) => {
    const tool = asObject(entry, ["tools", i]);
    for (const key of Object.keys(tool)) {
      if (key === "functionDeclarations" || key === "function_declarations") continue;
      if (tool[key] !== null && !notOffered.includes(key)) notOffered.push(key);
    }
    const declarations = field(tool, "functionDeclarations");
    if (declarations === undefined) return;
    asArray(declarations, ["tools", i, "functionDeclarations"]).forEach((raw, j) => {
      const path: Path = ["tools", i, "functionDeclarations", j];
      functions.push(validateDeclaration(asObject(raw, path), path, names));
    });
  });
  if (functions.length > LIMITS.maxTools) fail(["tools"], `At most ${LIMITS.maxTools} functions are allowed`);
  return { functions, notOffered };
}

function validateDeclaration(fn: Record<string, unknown>, path: Path, names: Set<string>): GeminiFunctionDeclaration {
  const name = uniqueToolName(fn, path, names);
  const description = field(fn, "description");
  const parameters = field(fn, "parameters");
  const jsonSchema = field(fn, "parametersJsonSchema");
  if (parameters !== undefined && jsonSchema !== undefined) {
    fail([...path, "parametersJsonSchema"], "Set parameters or parametersJsonSchema, not both");
  }
  let schema: Record<string, unknown> = { type: "object", properties: {} };
  if (jsonSchema !== undefined) schema = withJsonSchemaTypes(asObject(jsonSchema, [...path, "parametersJsonSchema"]));
  else if (parameters !== undefined) schema = toJsonSchema(parameters, [...path, "parameters"]);
  return {
    name,
    description: description === undefined ? "" : asString(description, [...path, "description"]),
    parameters: schema,
  };
}

function validateToolConfig(value: unknown, functions: readonly GeminiFunctionDeclaration[]): GeminiToolConfig {
  const config = asObject(value, ["toolConfig"]);
  const calling = field(config, "functionCallingConfig");
  if (calling === undefined) return { mode: "AUTO", allowedFunctionNames: [] };
  const path: Path = ["toolConfig", "functionCallingConfig"];
  const object = asObject(calling, path);
  const rawMode = field(object, "mode");
  const mode = rawMode === undefined ? "AUTO" : callingMode(rawMode, [...path, "mode"]);
  const allowed = field(object, "allowedFunctionNames");
  const names = allowed === undefined ? [] : asArray(allowed, [...path, "allowedFunctionNames"]);
  const allowedFunctionNames = names.map((raw, i) => {
    const at: Path = [...path, "allowedFunctionNames", i];
    const name = asString(raw, at);
    if (!functions.some((fn) => fn.name === name)) fail(at, `Function '${name}' is not declared in tools`);
    return name;
  });
  if (allowedFunctionNames.length > 0 && mode !== "ANY" && mode !== "VALIDATED") {
    fail([...path, "allowedFunctionNames"], "allowedFunctionNames is only allowed with mode ANY or VALIDATED");
  }
  const distinct = new Set(allowedFunctionNames);
  if (distinct.size > 1 && distinct.size < functions.length) {
    fail(
      [...path, "allowedFunctionNames"],
      "Restricting calls to several (but not all) declared functions is not served; name one function, or declare only the allowed ones",
    );
  }
  if (mode === "VALIDATED" && distinct.size === 1 && functions.length > 1) {
    fail(
      [...path, "allowedFunctionNames"],
      "With mode VALIDATED, allowedFunctionNames must name every declared function",
    );
  }
  if ((mode === "ANY" || mode === "VALIDATED") && functions.length === 0) {
    fail([...path, "mode"], `Mode ${mode} needs at least one function declaration in tools`);
  }
  return { mode, allowedFunctionNames: [...distinct] };
}

function callingMode(value: unknown, path: Path): GeminiCallingMode {
  const mode = asString(value, path).toUpperCase();
  if (mode === "MODE_UNSPECIFIED") return "AUTO";
  if (!(MODES as readonly string[]).includes(mode)) fail(path, `Input should be one of ${MODES.join(", ")}`);
  return mode as GeminiCallingMode;
}
