/**
 * Validation of a `POST /v1/chat/completions` body into a typed ChatRequest. Unknown fields
 * (`store`, `metadata`, `user`, `service_tier`, ...) are accepted and ignored; what Frontier does
 * not serve (`n > 1`, `logprobs`, audio output, images, penalties, `logit_bias`) is refused with a
 * 400 naming the field rather than silently dropped. `response_format` json_object / json_schema
 * are served by grammar (edge/protocols/openai/response-format.ts).
 */
import { LIMITS } from "../../../shared/limits.ts";
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
} from "../../core/check.ts";
import { validateAnswerFormat } from "../openai/response-format.ts";
import type { ChatFunctionTool, ChatRequest, ChatToolChoice } from "./types.ts";
import { validateMessages } from "./validate-messages.ts";

const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh"] as const;
const MAX_STOP = 4;

export function validateChatRequest(value: unknown): ChatRequest {
  if (!isObject(value)) fail([], "The request body must be a JSON object");
  const body = value;
  const model = asString(required(body, "model", []), ["model"]);
  if (model === "") fail(["model"], "String should have at least 1 character");
  refuseUnsupported(body);
  const responseFormat = optional(body, "response_format");
  const tools = validateTools(optional(body, "tools"));
  const toolChoice = optional(body, "tool_choice");
  const temperature = optional(body, "temperature");
  const topP = optional(body, "top_p");
  const seed = optional(body, "seed");
  const effort = optional(body, "reasoning_effort");
  const cacheKey = optional(body, "prompt_cache_key");
  const streamOptions = optional(body, "stream_options");
  const stream = flag(body, "stream", false);
  return {
    model,
    messages: validateMessages(required(body, "messages", [])),
    tools,
    toolChoice: toolChoice === undefined ? "auto" : validateToolChoice(toolChoice, tools),
    parallelToolCalls: flag(body, "parallel_tool_calls", true),
    maxTokens: maxTokens(body),
    temperature: temperature === undefined ? undefined : asNumber(temperature, ["temperature"], { min: 0, max: 2 }),
    topP: topP === undefined ? undefined : asNumber(topP, ["top_p"], { min: 0, max: 1 }),
    seed: seed === undefined ? undefined : asInteger(seed, ["seed"], { min: 0 }),
    stop: validateStop(optional(body, "stop")),
    reasoningEffort: effort === undefined ? undefined : asEnum(effort, ["reasoning_effort"], EFFORTS),
    stream,
    includeUsage: stream && streamOptions !== undefined && includeUsage(streamOptions),
    promptCacheKey: cacheKey === undefined ? undefined : asString(cacheKey, ["prompt_cache_key"]),
    responseFormat:
      responseFormat === undefined
        ? { type: "text" }
        : validateAnswerFormat(responseFormat, ["response_format"], "json_schema"),
  };
}

function refuseUnsupported(body: Record<string, unknown>): void {
  const n = optional(body, "n");
  if (n !== undefined && asInteger(n, ["n"], { min: 1 }) > 1) {
    fail(["n"], "Only one choice per request is supported; omit `n` or set it to 1");
  }
  const logprobs = optional(body, "logprobs");
  if (logprobs !== undefined && asBoolean(logprobs, ["logprobs"])) {
    fail(["logprobs"], "Log probabilities are not supported; omit `logprobs` or set it to false");
  }
  if (optional(body, "top_logprobs") !== undefined) fail(["top_logprobs"], "Log probabilities are not supported");
  if (optional(body, "audio") !== undefined) fail(["audio"], "Audio output is not supported");
  const modalities = optional(body, "modalities");
  if (modalities !== undefined) {
    asArray(modalities, ["modalities"]).forEach((entry, i) => {
      if (entry !== "text") fail(["modalities", i], `Output modality ${JSON.stringify(entry)} is not supported`);
    });
  }
  if (optional(body, "functions") !== undefined)
    fail(["functions"], "Legacy `functions` are not supported; use `tools`");
  if (optional(body, "function_call") !== undefined) {
    fail(["function_call"], "Legacy `function_call` is not supported; use `tool_choice`");
  }
  if (optional(body, "web_search_options") !== undefined) {
    fail(["web_search_options"], "Web search is not supported by this server");
  }
  for (const key of ["frequency_penalty", "presence_penalty"]) {
    const penalty = optional(body, key);
    if (penalty !== undefined && asNumber(penalty, [key], { min: -2, max: 2 }) !== 0) {
      fail([key], `\`${key}\` is not supported; omit it or set it to 0`);
    }
  }
  const bias = optional(body, "logit_bias");
  if (bias !== undefined && Object.keys(asObject(bias, ["logit_bias"])).length > 0) {
    fail(["logit_bias"], "`logit_bias` is not supported");
  }
}

function flag(body: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = optional(body, key);
  return value === undefined ? fallback : asBoolean(value, [key]);
}

/** `max_completion_tokens` (current) or `max_tokens` (deprecated); the smaller wins when both come. */
function maxTokens(body: Record<string, unknown>): number | undefined {
  const read = (key: string) => {
    const value = optional(body, key);
    return value === undefined ? undefined : asInteger(value, [key], { min: 1, max: LIMITS.maxOutputTokens });
  };
  const completion = read("max_completion_tokens");
  const legacy = read("max_tokens");
  if (completion === undefined) return legacy;
  return legacy === undefined ? completion : Math.min(completion, legacy);
}

function includeUsage(value: unknown): boolean {
  const options = asObject(value, ["stream_options"]);
  const include = optional(options, "include_usage");
  return include === undefined ? false : asBoolean(include, ["stream_options", "include_usage"]);
}

function validateStop(value: unknown): string[] {
  if (value === undefined) return [];
  const list = typeof value === "string" ? [value] : asArray(value, ["stop"]);
  if (list.length > MAX_STOP) fail(["stop"], `At most ${MAX_STOP} stop sequences are allowed`);
  return list.map((entry, i) => {
    const at: Path = typeof value === "string" ? ["stop"] : ["stop", i];
    const text = asString(entry, at);
    if (text === "" || text.length > LIMITS.maxStopSequenceLength) {
      fail(at, `String should have between 1 and ${LIMITS.maxStopSequenceLength} characters`);
    }
    return text;
  });
}

function validateTools(value: unknown): ChatFunctionTool[] {
  if (value === undefined) return [];
  const list = asArray(value, ["tools"]);
  if (list.length > LIMITS.maxTools) fail(["tools"], `At most ${LIMITS.maxTools} tools are allowed`);
  const names = new Set<string>();
  return list.map((entry, i) => {
    const path: Path = ["tools", i];
    const tool = asObject(entry, path);
    const type = asString(required(tool, "type", path), [...path, "type"]);
    if (type === "custom") {
      fail(
        [...path, "type"],
        "Custom (freeform) tools are not served on /v1/chat/completions yet; /v1/responses serves them (grammar included), or declare a function tool",
      );
    }
    if (type !== "function") fail([...path, "type"], `Tool type '${type}' is not supported; only function tools are`);
    const fnPath: Path = [...path, "function"];
    const fn = asObject(required(tool, "function", path), fnPath);
    const name = uniqueToolName(fn, fnPath, names, LIMITS.maxOpenAiToolNameLength);
    const description = optional(fn, "description");
    const parameters = optional(fn, "parameters");
    return {
      name,
      description: description === undefined ? "" : asString(description, [...fnPath, "description"]),
      parameters:
        parameters === undefined ? { type: "object", properties: {} } : asObject(parameters, [...fnPath, "parameters"]),
    };
  });
}

function validateToolChoice(value: unknown, tools: readonly ChatFunctionTool[]): ChatToolChoice {
  const path: Path = ["tool_choice"];
  if (typeof value === "string") return asEnum(value, path, ["auto", "none", "required"] as const);
  const choice = asObject(value, path);
  const type = asString(required(choice, "type", path), [...path, "type"]);
  if (type === "allowed_tools") fail([...path, "type"], "allowed_tools is not supported; narrow `tools` instead");
  asEnum(type, [...path, "type"], ["function"]);
  const fn = asObject(required(choice, "function", path), [...path, "function"]);
  const name = asString(required(fn, "name", [...path, "function"]), [...path, "function", "name"]);
  if (!tools.some((tool) => tool.name === name))
    fail([...path, "function", "name"], `Tool '${name}' not found in tools`);
  return { name };
}
