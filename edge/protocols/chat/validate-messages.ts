/**
 * Validation of a Chat Completions `messages` list into typed messages. Text parts are joined;
 * media parts (images, audio, files) are refused with a 400 naming the part, never dropped.
 */
import { LIMITS } from "../../../shared/limits.ts";
import { asArray, asEnum, asObject, asString, fail, optional, type Path, required } from "../../core/check.ts";
import type { ChatMessage, ChatToolCall } from "./types.ts";

const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;
const MEDIA_PARTS = ["image_url", "input_audio", "file", "audio"];

export function validateMessages(value: unknown): ChatMessage[] {
  const path: Path = ["messages"];
  const list = asArray(value, path);
  if (list.length === 0) fail(path, "List should have at least 1 item");
  if (list.length > LIMITS.maxMessages) fail(path, `List should have at most ${LIMITS.maxMessages} items`);
  return list.map((entry, i) => validateMessage(entry, [...path, i]));
}

function validateMessage(value: unknown, path: Path): ChatMessage {
  const message = asObject(value, path);
  const role = optional(message, "role");
  if (role === "function") {
    fail([...path, "role"], "The legacy 'function' role is not supported; use 'tool' messages with tool_call_id");
  }
  switch (asEnum(required(message, "role", path), [...path, "role"], ROLES)) {
    case "system":
      return { role: "system", text: contentText(required(message, "content", path), [...path, "content"]) };
    case "developer":
      return { role: "developer", text: contentText(required(message, "content", path), [...path, "content"]) };
    case "user":
      return { role: "user", text: contentText(required(message, "content", path), [...path, "content"]) };
    case "assistant":
      return assistantMessage(message, path);
    case "tool":
      return {
        role: "tool",
        toolCallId: nonEmpty(required(message, "tool_call_id", path), [...path, "tool_call_id"]),
        text: contentText(required(message, "content", path), [...path, "content"]),
      };
  }
}

function assistantMessage(message: Record<string, unknown>, path: Path): ChatMessage {
  if (optional(message, "audio") !== undefined) fail([...path, "audio"], "Audio output is not supported");
  if (optional(message, "function_call") !== undefined) {
    fail([...path, "function_call"], "The legacy function_call is not supported; use tool_calls");
  }
  const content = optional(message, "content");
  const calls = optional(message, "tool_calls");
  const toolCalls = calls === undefined ? [] : asArray(calls, [...path, "tool_calls"]).map(toolCall(path));
  if (content === undefined && toolCalls.length === 0) fail([...path, "content"], "Field required");
  // llama.cpp and vLLM return `reasoning_content`; some clients replay it (others use `reasoning`).
  const reasoning = optional(message, "reasoning_content") ?? optional(message, "reasoning");
  return {
    role: "assistant",
    text: content === undefined ? "" : contentText(content, [...path, "content"]),
    reasoning: reasoning === undefined ? "" : asString(reasoning, [...path, "reasoning_content"]),
    toolCalls,
  };
}

function toolCall(messagePath: Path) {
  return (value: unknown, i: number): ChatToolCall => {
    const path: Path = [...messagePath, "tool_calls", i];
    const call = asObject(value, path);
    const type = optional(call, "type");
    if (type !== undefined && type !== "function") {
      fail([...path, "type"], `Tool call type '${String(type)}' is not supported; only function calls are`);
    }
    const fn = asObject(required(call, "function", path), [...path, "function"]);
    return {
      id: nonEmpty(required(call, "id", path), [...path, "id"]),
      name: nonEmpty(required(fn, "name", [...path, "function"]), [...path, "function", "name"]),
      arguments: asString(required(fn, "arguments", [...path, "function"]), [...path, "function", "arguments"]),
    };
  };
}

/** A string, or a list of text (and refusal) parts joined in order. */
function contentText(value: unknown, path: Path): string {
  if (typeof value === "string") return value;
  return asArray(value, path)
    .map((raw, i) => {
      const at: Path = [...path, i];
      const part = asObject(raw, at);
      const type = asString(required(part, "type", at), [...at, "type"]);
      if (type === "text") return asString(required(part, "text", at), [...at, "text"]);
      if (type === "refusal") return asString(required(part, "refusal", at), [...at, "refusal"]);
      if (MEDIA_PARTS.includes(type)) fail([...at, "type"], `Content part '${type}' is not supported by this model`);
      return fail([...at, "type"], `Unsupported content part type ${JSON.stringify(type)}`);
    })
    .join("");
}

function nonEmpty(value: unknown, path: Path): string {
  const text = asString(value, path);
  if (text === "") fail(path, "String should have at least 1 character");
  return text;
}
