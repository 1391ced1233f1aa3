/**
 * Validation of an Anthropic Messages (or count_tokens) request body into a typed MessagesRequest.
 * Unknown fields, `cache_control`, `metadata`, `output_config` and `context_management` are
 * accepted and ignored.
 */

import type { ServerToolDeclaration } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
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
  uniqueToolName,
} from "../../../core/check.ts";
import { anthropicServerTool, anthropicServerToolKind } from "../../../server-tools/declarations.ts";
import {
  checkForcedChoice,
  checkNotAllDeferred,
  checkToolReferences,
  isToolSearchType,
  referencedToolNames,
} from "./deferred-tools.ts";
import type { MessagesRequest, ThinkingSpec, ToolChoiceSpec, ToolSpec } from "./types.ts";
import { validateMessages } from "./validate-content.ts";

/** Claude Code's first system block; its value changes per request, so it never reaches the prompt. */
export const BILLING_HEADER_PREFIX = "x-anthropic-billing-header";

export interface ValidateOptions {
  /** `max_tokens` is required by /v1/messages and not by count_tokens. */
  requireMaxTokens: boolean;
}

export function validateMessagesRequest(value: unknown, options: ValidateOptions): MessagesRequest {
  if (!isObject(value)) fail([], "The request body must be a JSON object");
  const body = value;
  const model = asString(required(body, "model", []), ["model"]);
  if (model === "") fail(["model"], "String should have at least 1 character");
  const maxTokens = options.requireMaxTokens ? required(body, "max_tokens", []) : optional(body, "max_tokens");
  const metadata = optional(body, "metadata");
  if (metadata !== undefined) asObject(metadata, ["metadata"]);
  const { tools, serverTools, notOffered } = validateTools(optional(body, "tools"));
  const toolChoice = optional(body, "tool_choice");
  const thinking = optional(body, "thinking");
  const temperature = optional(body, "temperature");
  const topP = optional(body, "top_p");
  const topK = optional(body, "top_k");
  const stream = optional(body, "stream");
  const messages = validateMessages(required(body, "messages", []), ["messages"]);
  checkToolReferences(messages, new Set([...tools.map((t) => t.name), ...serverTools.map((t) => t.name)]));
  const choice =
    toolChoice === undefined
      ? undefined
      : validateToolChoice(toolChoice, [...tools.map((t) => t.name), ...serverTools.map((t) => t.name)]);
  checkForcedChoice(choice, tools, referencedToolNames(messages));
  return {
    model,
    max_tokens:
      maxTokens === undefined
        ? undefined
        : asInteger(maxTokens, ["max_tokens"], { min: 1, max: LIMITS.maxOutputTokens }),
    messages,
    system: validateSystem(optional(body, "system")),
    tools,
    server_tools: serverTools,
    tools_not_offered: notOffered,
    tool_choice: choice,
    thinking: thinking === undefined ? undefined : validateThinking(thinking),
    temperature: temperature === undefined ? undefined : asNumber(temperature, ["temperature"], { min: 0, max: 1 }),
    top_p: topP === undefined ? undefined : asNumber(topP, ["top_p"], { min: 0, max: 1 }),
    top_k: topK === undefined ? undefined : asInteger(topK, ["top_k"], { min: 0 }),
    stop_sequences: validateStopSequences(optional(body, "stop_sequences")),
    stream: stream === undefined ? false : asBoolean(stream, ["stream"]),
  };
}

function validateSystem(value: unknown): string[] {
  if (value === undefined) return [];
  if (typeof value === "string") return value === "" ? [] : [value];
  const blocks = asArray(value, ["system"]).map((block, i) => {
    const path: Path = ["system", i];
    const object = asObject(block, path);
    asEnum(required(object, "type", path), [...path, "type"], ["text"]);
    return asString(required(object, "text", path), [...path, "text"]);
  });
  return blocks.filter((text) => !text.startsWith(BILLING_HEADER_PREFIX));
}

interface ValidatedTools {
  tools: ToolSpec[];
  /** Hosted web_search / web_fetch declarations (the worker offers those it has a provider for). */
  serverTools: ServerToolDeclaration[];
  /** Other hosted tool types (bash_..., text_editor_..., code_execution_..., tool_search_tool_...): never offered. */
  notOffered: string[];
}

function validateTools(value: unknown): ValidatedTools {
  const out: ValidatedTools = { tools: [], serverTools: [], notOffered: [] };
  if (value === undefined) return out;
  const list = asArray(value, ["tools"]);
  if (list.length > LIMITS.maxTools) fail(["tools"], `At most ${LIMITS.maxTools} tools are allowed`);
  const names = new Set<string>();
  let deferred = 0;
  list.forEach((entry, i) => {
    const path: Path = ["tools", i];
    const tool = asObject(entry, path);
    const type = optional(tool, "type");
    const deferValue = optional(tool, "defer_loading");
    const defer =
      deferValue === undefined || deferValue === null ? false : asBoolean(deferValue, [...path, "defer_loading"]);
    if (defer) deferred++;
    if (type !== undefined && asString(type, [...path, "type"]) !== "custom") {
      const typeName = asString(type, [...path, "type"]);
      if (defer && isToolSearchType(typeName))
        fail([...path, "defer_loading"], "The tool search tool cannot be deferred");
      const kind = anthropicServerToolKind(typeName);
      if (kind === undefined) {
        if (!out.notOffered.includes(typeName)) out.notOffered.push(typeName);
        return;
      }
      const declaration = anthropicServerTool(tool, typeName, kind, path);
      if (names.has(declaration.name)) {
        fail([...path, "name"], `Tool names must be unique; '${declaration.name}' appears more than once`);
      }
      names.add(declaration.name);
      out.serverTools.push(declaration);
      return;
    }
    const name = uniqueToolName(tool, path, names);
    const description = optional(tool, "description");
    out.tools.push({
      name,
      description: description === undefined ? "" : asString(description, [...path, "description"]),
      input_schema: asObject(required(tool, "input_schema", path), [...path, "input_schema"]),
      defer_loading: defer,
    });
  });
  checkNotAllDeferred(list.length, deferred);
  return out;
}

function validateToolChoice(value: unknown, toolNames: readonly string[]): ToolChoiceSpec {
  const path: Path = ["tool_choice"];
  const choice = asObject(value, path);
  const type = asEnum(required(choice, "type", path), [...path, "type"], ["auto", "any", "tool", "none"]);
  const parallel = optional(choice, "disable_parallel_tool_use");
  const disable = parallel === undefined ? false : asBoolean(parallel, [...path, "disable_parallel_tool_use"]);
  if (type !== "tool") return { type, disable_parallel_tool_use: disable };
  const name = asString(required(choice, "name", path), [...path, "name"]);
  if (!toolNames.includes(name)) fail([...path, "name"], `Tool '${name}' not found in tools`);
  return { type, name, disable_parallel_tool_use: disable };
}

function validateThinking(value: unknown): ThinkingSpec {
  const path: Path = ["thinking"];
  const thinking = asObject(value, path);
  const type = asEnum(required(thinking, "type", path), [...path, "type"], ["enabled", "disabled", "adaptive"]);
  if (type !== "enabled") return { type };
  const budget = asInteger(required(thinking, "budget_tokens", path), [...path, "budget_tokens"], {
    min: 1,
    max: LIMITS.maxOutputTokens,
  });
  return { type, budget_tokens: budget };
}

function validateStopSequences(value: unknown): string[] {
  if (value === undefined) return [];
  const list = asArray(value, ["stop_sequences"]);
  if (list.length > LIMITS.maxStopSequences) {
    fail(["stop_sequences"], `At most ${LIMITS.maxStopSequences} stop sequences are allowed`);
  }
  return list.map((entry, i) => {
    const text = asString(entry, ["stop_sequences", i]);
    if (text.length === 0 || text.length > LIMITS.maxStopSequenceLength) {
      fail(["stop_sequences", i], `String should have between 1 and ${LIMITS.maxStopSequenceLength} characters`);
    }
    return text;
  });
}
