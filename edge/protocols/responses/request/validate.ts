/**
 * Validation of a `POST /v1/responses` body into a typed ResponsesRequest. Unknown fields
 * (`service_tier`, `client_metadata`, `stream_options`, ...) are accepted and ignored; features
 * Frontier does not serve (`background`, most hosted tools,
 * `conversation`) are refused with a 400 naming the field rather than silently dropped. Tools:
 * tools.ts (Codex's namespace and custom tools; web_search declared but not offered).
 */
import { LIMITS } from "../../../../shared/limits.ts";
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
} from "../../../core/check.ts";
import { type AnswerFormat, validateAnswerFormat } from "../../openai/response-format.ts";
import { EFFORTS } from "./configuration-updates.ts";
import { validateTools } from "./tools.ts";
import type { ResponsesRequest, ToolChoice } from "./types.ts";
import { validateTurnInput } from "./validate-input.ts";

const MAX_METADATA_KEYS = 16;

/** `counting`: POST /v1/responses/input_tokens, where `model` and `input` are optional. */
export function validateResponsesRequest(value: unknown, { counting = false } = {}): ResponsesRequest {
  if (!isObject(value)) fail([], "The request body must be a JSON object");
  const body = value;
  const model =
    counting && optional(body, "model") === undefined ? "" : asString(required(body, "model", []), ["model"]);
  if (model === "" && !counting) fail(["model"], "String should have at least 1 character");
  refuseUnsupported(body);
  const declared = new Set<string>();
  const { tools, notOffered, serverTools } = validateTools(optional(body, "tools"), ["tools"], declared);
  const toolChoice = optional(body, "tool_choice");
  const maxOutput = optional(body, "max_output_tokens");
  const temperature = optional(body, "temperature");
  const topP = optional(body, "top_p");
  const instructions = optional(body, "instructions");
  const previous = optional(body, "previous_response_id");
  const cacheKey = optional(body, "prompt_cache_key");
  const user = optional(body, "user");
  const rawInput = counting ? (optional(body, "input") ?? []) : required(body, "input", []);
  const { items: input, compactionTrigger } = validateTurnInput(rawInput, ["input"], declared);
  if (compactionTrigger && input.length === 0 && previous === undefined) {
    fail(["input"], "Nothing to compact: compaction_trigger follows the conversation it compacts");
  }
  return {
    model,
    input,
    instructions: instructions === undefined ? undefined : asString(instructions, ["instructions"]),
    tools,
    tools_not_offered: notOffered,
    server_tools: serverTools,
    include_encrypted_reasoning: includes(optional(body, "include"), "reasoning.encrypted_content"),
    tool_choice: toolChoice === undefined ? "auto" : validateToolChoice(toolChoice, declared, serverTools.length > 0),
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
    text_format: textFormat(optional(body, "text")),
    ...(compactionTrigger ? { compaction_trigger: true as const } : {}),
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
  const truncation = optional(body, "truncation");
  if (truncation !== undefined) asEnum(truncation, ["truncation"], ["disabled", "auto"]);
}

/** `text.format`: text, json_object or json_schema (its fields inline), served by grammar. */
function textFormat(value: unknown): AnswerFormat {
  if (value === undefined) return { type: "text" };
  const format = optional(asObject(value, ["text"]), "format");
  return format === undefined ? { type: "text" } : validateAnswerFormat(format, ["text", "format"], "inline");
}

function flag(body: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = optional(body, key);
  return value === undefined ? fallback : asBoolean(value, [key]);
}

/** Whether `include` (a list of strings; unknown entries are ignored) names `entry`. */
function includes(value: unknown, entry: string): boolean {
  if (value === undefined) return false;
  return asArray(value, ["include"]).some((item, i) => asString(item, ["include", i]) === entry);
}

/** `tool_choice`; a function it names is one the request declares (in `tools` or an `additional_tools` item). */
function validateToolChoice(value: unknown, declared: ReadonlySet<string>, webSearch: boolean): ToolChoice {
  const path: Path = ["tool_choice"];
  if (typeof value === "string") return asEnum(value, path, ["auto", "required", "none"] as const);
  const choice = asObject(value, path);
  const type = asEnum(
    required(choice, "type", path),
    [...path, "type"],
    ["function", "web_search", "web_search_preview"],
  );
  if (type !== "function") {
    // A hosted tool's choice forces a search (at every step of the turn, as on Messages).
    if (!webSearch) fail([...path, "type"], `Tool '${type}' not found in tools`);
    return { type: "function", name: "web_search" };
  }
  const name = asString(required(choice, "name", path), [...path, "name"]);
  if (!declared.has(name)) fail([...path, "name"], `Tool '${name}' not found in tools`);
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
