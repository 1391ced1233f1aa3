/**
 * Validation of a `POST /v1/responses` body into a typed ResponsesRequest. Unknown fields
 * (`include`, `service_tier`, `stream_options`, ...) are accepted and ignored; features Frontier
 * does not serve (`background`, non-text `text.format`, hosted tools, `conversation`) are refused
 * with a 400 naming the field rather than silently dropped.
 */
import { LIMITS } from "../../shared/limits.ts";
import {
  asArray,
  asBoolean,
  asEnum,
  asInteger,
  asNumber,
  asObject,
  asString,
  fail,
  isObject,
  optional,
  type Path,
  required,
  uniqueToolName,
} from "../check.ts";
import type { FunctionTool, ResponsesRequest, ToolChoice } from "./types.ts";
import { validateInput } from "./validate-input.ts";

const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
const MAX_METADATA_KEYS = 16;

export function validateResponsesRequest(value: unknown): ResponsesRequest {
  if (!isObject(value)) fail([], "The request body must be a JSON object");
  const body = value;
  const model = asString(required(body, "model", []), ["model"]);
  if (model === "") fail(["model"], "String should have at least 1 character");
  refuseUnsupported(body);
  const tools = validateTools(optional(body, "tools"));
  const toolChoice = optional(body, "tool_choice");
  const maxOutput = optional(body, "max_output_tokens");
  const temperature = optional(body, "temperature");
  const topP = optional(body, "top_p");
  const instructions = optional(body, "instructions");
  const previous = optional(body, "previous_response_id");
  const cacheKey = optional(body, "prompt_cache_key");
  const user = optional(body, "user");
  return {
    model,
    input: validateInput(required(body, "input", []), ["input"]),
    instructions: instructions === undefined ? undefined : asString(instructions, ["instructions"]),
    tools,
    tool_choice: toolChoice === undefined ? "auto" : validateToolChoice(toolChoice, tools),
    parallel_tool_calls: flag(body, "parallel_tool_calls", true),
    max_output_tokens:
      maxOutput === undefined
        ? undefined
        : asInteger(maxOutput, ["max_output_tokens"], { min: 1, max: LIMITS.maxOutputTokens }),
    temperature: temperature === undefined ? undefined : asNumber(temperature, ["temperature"], { min: 0, max: 2 }),
    top_p: topP === undefined ? undefined : asNumber(topP, ["top_p"], { min: 0, max: 1 }),
    store: flag(body, "store", true),
    stream: flag(body, "stream", false),
    previous_response_id: previous === undefined ? undefined : asString(previous, ["previous_response_id"]),
    reasoning_effort: reasoningEffort(optional(body, "reasoning")),
    prompt_cache_key: cacheKey === undefined ? undefined : asString(cacheKey, ["prompt_cache_key"]),
    metadata: validateMetadata(optional(body, "metadata")),
    user: user === undefined ? undefined : asString(user, ["user"]),
  };
}

function refuseUnsupported(body: Record<string, unknown>): void {
  const background = optional(body, "background");
  if (background !== undefined && asBoolean(background, ["background"])) {
    fail(["background"], "Background responses are not supported; omit `background` or set it to false");
  }
  if (optional(body, "conversation") !== undefined) {
    fail(["conversation"], "The Conversations API is not supported; use previous_response_id or send the full input");
  }
  const text = optional(body, "text");
  if (text !== undefined) {
    const format = optional(asObject(text, ["text"]), "format");
    if (format !== undefined) {
      const type = asString(required(asObject(format, ["text", "format"]), "type", ["text", "format"]), [
        "text",
        "format",
        "type",
      ]);
      if (type !== "text") fail(["text", "format", "type"], `Output format '${type}' is not supported; use 'text'`);
    }
  }
  const truncation = optional(body, "truncation");
  if (truncation !== undefined) asEnum(truncation, ["truncation"], ["disabled", "auto"]);
}

function flag(body: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = optional(body, key);
  return value === undefined ? fallback : asBoolean(value, [key]);
}

function validateTools(value: unknown): FunctionTool[] {
  if (value === undefined) return [];
  const list = asArray(value, ["tools"]);
  if (list.length > LIMITS.maxTools) fail(["tools"], `At most ${LIMITS.maxTools} tools are allowed`);
  const names = new Set<string>();
  return list.map((entry, i) => {
    const path: Path = ["tools", i];
    const tool = asObject(entry, path);
    const type = asString(required(tool, "type", path), [...path, "type"]);
    if (type !== "function") fail([...path, "type"], `Tool type '${type}' is not supported; only function tools are`);
    // OpenAI: a-z, A-Z, 0-9, underscores and dashes, at most 64 characters.
    const name = uniqueToolName(tool, path, names, 64);
    const description = optional(tool, "description");
    const parameters = optional(tool, "parameters");
    const strict = optional(tool, "strict");
    return {
      type: "function" as const,
      name,
      description: description === undefined ? null : asString(description, [...path, "description"]),
      parameters:
        parameters === undefined ? { type: "object", properties: {} } : asObject(parameters, [...path, "parameters"]),
      strict: strict === undefined ? null : asBoolean(strict, [...path, "strict"]),
    };
  });
}

function validateToolChoice(value: unknown, tools: readonly FunctionTool[]): ToolChoice {
  const path: Path = ["tool_choice"];
  if (typeof value === "string") return asEnum(value, path, ["auto", "required", "none"] as const);
  const choice = asObject(value, path);
  asEnum(required(choice, "type", path), [...path, "type"], ["function"]);
  const name = asString(required(choice, "name", path), [...path, "name"]);
  if (!tools.some((tool) => tool.name === name)) fail([...path, "name"], `Tool '${name}' not found in tools`);
  return { type: "function", name };
}

function reasoningEffort(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const reasoning = asObject(value, ["reasoning"]);
  const effort = optional(reasoning, "effort");
  return effort === undefined ? undefined : asEnum(effort, ["reasoning", "effort"], EFFORTS);
}

function validateMetadata(value: unknown): Record<string, string> {
  if (value === undefined) return {};
  const metadata = asObject(value, ["metadata"]);
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_KEYS) fail(["metadata"], `At most ${MAX_METADATA_KEYS} keys are allowed`);
  for (const [key, entry] of entries) {
    if (key.length > 64) fail(["metadata", key], "Keys should have at most 64 characters");
    if (asString(entry, ["metadata", key]).length > 512)
      fail(["metadata", key], "Values should have at most 512 characters");
  }
  return metadata as Record<string, string>;
}
