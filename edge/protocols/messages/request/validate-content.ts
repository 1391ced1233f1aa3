/** Validation of `messages` and their content blocks. */
import { LIMITS } from "../../../../shared/limits.ts";
import {
  asArray,
  asBoolean,
  asEnum,
  asObject,
  asString,
  fail,
  isObject,
  optional,
  type Path,
  required,
} from "../../../core/check.ts";
import type { InputBlock, InputMessage, ToolResultPart } from "./types.ts";
import {
  validateCitations,
  validateRedactedThinking,
  validateServerToolUse,
  validateWebFetchResult,
  validateWebSearchResult,
} from "./validate-server-tools.ts";

const ROLES = ["user", "assistant", "system"] as const;
/** Block kinds the model cannot read; rejected with a clear message rather than silently dropped. */
const UNSUPPORTED_MEDIA = new Set(["image", "document"]);

export function validateMessages(value: unknown, path: Path): InputMessage[] {
  const list = asArray(value, path);
  if (list.length === 0) fail(path, "At least one message is required");
  if (list.length > LIMITS.maxMessages) fail(path, `At most ${LIMITS.maxMessages} messages are allowed`);
  return list.map((message, i) => validateMessage(message, [...path, i]));
}

function validateMessage(value: unknown, path: Path): InputMessage {
  const message = asObject(value, path);
  const role = asEnum(required(message, "role", path), [...path, "role"], ROLES);
  const content = validateContent(required(message, "content", path), [...path, "content"]);
  return { role, content };
}

/** Message content: a string (one text block) or a list of blocks. */
export function validateContent(value: unknown, path: Path): InputBlock[] {
  if (typeof value === "string") return value === "" ? [] : [{ type: "text", text: value }];
  if (!Array.isArray(value)) fail(path, "Input should be a valid string or a list of content blocks");
  return value.map((block, i) => validateBlock(block, [...path, i]));
}

function validateBlock(value: unknown, path: Path): InputBlock {
  const block = asObject(value, path);
  const type = asString(required(block, "type", path), [...path, "type"]);
  switch (type) {
    case "text":
      validateCitations(block, path);
      return { type, text: asString(required(block, "text", path), [...path, "text"]) };
    case "thinking": {
      const value = optional(block, "signature");
      const signature = value === undefined ? "" : asString(value, [...path, "signature"]);
      const thinking = asString(required(block, "thinking", path), [...path, "thinking"]);
      // A signature is another provider's until foreign-history.ts verifies it as Frontier's.
      return { type, thinking, signature, foreign: signature !== "" };
    }
    case "redacted_thinking":
      return validateRedactedThinking(block, path, opaqueJson(block));
    case "server_tool_use":
      return validateServerToolUse(block, path);
    case "web_search_tool_result":
      return validateWebSearchResult(block, path);
    case "web_fetch_tool_result":
      return validateWebFetchResult(block, path);
    case "tool_use":
      return {
        type,
        id: asString(required(block, "id", path), [...path, "id"]),
        name: asString(required(block, "name", path), [...path, "name"]),
        input: asObject(required(block, "input", path), [...path, "input"]),
      };
    case "tool_result": {
      const content = optional(block, "content");
      const isError = optional(block, "is_error");
      return {
        type,
        tool_use_id: asString(required(block, "tool_use_id", path), [...path, "tool_use_id"]),
        content: content === undefined ? "" : validateToolResultContent(content, [...path, "content"]),
        is_error: isError === undefined ? false : asBoolean(isError, [...path, "is_error"]),
      };
    }
    default:
      if (UNSUPPORTED_MEDIA.has(type)) {
        fail(path, `${type} content blocks are not supported by this model; send text instead`);
      }
      return { type: "opaque", kind: type, json: opaqueJson(block) };
  }
}

function validateToolResultContent(value: unknown, path: Path): string | ToolResultPart[] {
  if (typeof value === "string") return value;
  return asArray(value, path).map((part, i): ToolResultPart => {
    const partPath = [...path, i];
    const block = asObject(part, partPath);
    const type = asString(required(block, "type", partPath), [...partPath, "type"]);
    if (type === "text")
      return { type: "text", text: asString(required(block, "text", partPath), [...partPath, "text"]) };
    if (type === "tool_reference") {
      const name = asString(required(block, "tool_name", partPath), [...partPath, "tool_name"]);
      if (name === "") fail([...partPath, "tool_name"], "String should have at least 1 character");
      return { type, tool_name: name };
    }
    return { type: "other", kind: type };
  });
}

/**
 * A foreign block's JSON, as the client sent it minus `cache_control` (clients move cache markers
 * between turns; the marker must not change the rendered history).
 */
export function opaqueJson(block: Record<string, unknown>): string {
  return JSON.stringify(block, (key, value: unknown) =>
    key === "cache_control" && isObject(value) ? undefined : value,
  );
}
