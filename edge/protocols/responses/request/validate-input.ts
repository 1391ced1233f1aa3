/**
 * Validation of a Responses request's `input` (a string or a list of items) into typed items.
 * Codex's items map onto the same few: a namespaced `function_call` (or `custom_tool_call`) under its
 * offered name, `custom_tool_call(_output)` as a call of the offered wrapper function (tools.ts);
 * `additional_tools` (its tools checked as `tools` are, names unique across the request) and
 * `configuration_update` (configuration-updates.ts) are kept as items, for the history they belong to.
 */
import { LIMITS } from "../../../../shared/limits.ts";
import {
  asArray,
  asEnum,
  asObject,
  asString,
  fail,
  isObject,
  optional,
  type Path,
  required,
} from "../../../core/check.ts";
import { validateConfigurationUpdate } from "./configuration-updates.ts";
import { customArguments, namespacedName, validateTools } from "./tools.ts";
import type { InputItem, InputRole } from "./types.ts";
import { validateWebSearchCall } from "./validate-web-search.ts";

const ROLES: readonly InputRole[] = ["user", "assistant", "system", "developer"];
const UNSUPPORTED_PARTS = ["input_image", "input_file", "input_audio"];

/**
 * The input items, and whether the list ended with `{"type": "compaction_trigger"}` (Codex's
 * remote compaction v2: this turn writes the summary). A trigger anywhere else is refused.
 */
export function validateTurnInput(
  value: unknown,
  path: Path,
  declared: Set<string> = new Set(),
): { items: InputItem[]; compactionTrigger: boolean } {
  if (typeof value === "string")
    return { items: [{ type: "message", role: "user", text: value }], compactionTrigger: false };
  const items = asArray(value, path);
  if (items.length > LIMITS.maxMessages) fail(path, `List should have at most ${LIMITS.maxMessages} items`);
  const last = items.at(-1);
  const compactionTrigger = isObject(last) && last.type === "compaction_trigger";
  const rest = compactionTrigger ? items.slice(0, -1) : items;
  return { items: rest.map((item, i) => validateItem(item, [...path, i], declared)), compactionTrigger };
}

/** Item types served, for the 400 an unknown one gets. */
const SERVED_TYPES =
  "message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning, web_search_call, compaction, additional_tools or configuration_update";

function validateItem(value: unknown, path: Path, declared: Set<string>): InputItem {
  const item = asObject(value, path);
  const type = optional(item, "type") ?? (item.role !== undefined ? "message" : undefined);
  if (type === undefined) fail([...path, "type"], "Field required");
  switch (type) {
    case "message":
      return {
        type: "message",
        role: asEnum(required(item, "role", path), [...path, "role"], ROLES),
        text: messageText(required(item, "content", path), [...path, "content"]),
        ...optionalId(item, path),
      };
    case "function_call": {
      const name = nonEmpty(required(item, "name", path), [...path, "name"]);
      const namespace = optional(item, "namespace");
      return {
        type: "function_call",
        call_id: nonEmpty(required(item, "call_id", path), [...path, "call_id"]),
        name: namespace === undefined ? name : namespacedName(nonEmpty(namespace, [...path, "namespace"]), name),
        arguments: asString(required(item, "arguments", path), [...path, "arguments"]),
        ...optionalId(item, path),
      };
    }
    case "custom_tool_call": {
      const name = nonEmpty(required(item, "name", path), [...path, "name"]);
      const namespace = optional(item, "namespace");
      return {
        type: "function_call",
        call_id: nonEmpty(required(item, "call_id", path), [...path, "call_id"]),
        name: namespace === undefined ? name : namespacedName(nonEmpty(namespace, [...path, "namespace"]), name),
        arguments: customArguments(asString(required(item, "input", path), [...path, "input"])),
        ...optionalId(item, path),
      };
    }
    case "function_call_output":
    case "custom_tool_call_output":
      return {
        type: "function_call_output",
        call_id: nonEmpty(required(item, "call_id", path), [...path, "call_id"]),
        output: partsText(required(item, "output", path), [...path, "output"]),
      };
    case "reasoning": {
      const encrypted = optional(item, "encrypted_content");
      return {
        type: "reasoning",
        text: reasoningText(item, path),
        ...optionalId(item, path),
        ...(encrypted === undefined ? {} : { encrypted_content: asString(encrypted, [...path, "encrypted_content"]) }),
      };
    }
    case "web_search_call":
      return validateWebSearchCall(item, path);
    case "compaction":
    case "compaction_summary":
      return {
        type: "message",
        role: "user",
        text: "",
        compaction: nonEmpty(required(item, "encrypted_content", path), [...path, "encrypted_content"]),
        ...optionalId(item, path),
      };
    case "additional_tools": {
      asEnum(required(item, "role", path), [...path, "role"], ["developer"]);
      const { tools, notOffered, serverTools } = validateTools(
        required(item, "tools", path),
        [...path, "tools"],
        declared,
      );
      // Hosted tools are declared in `tools` (the worker offers them in the header); here they are not offered.
      const hosted = serverTools.map((tool) => tool.type);
      return {
        type: "additional_tools",
        tools,
        tools_not_offered: [...notOffered, ...hosted],
        ...optionalId(item, path),
      };
    }
    case "configuration_update":
      return validateConfigurationUpdate(item, path);
    case "compaction_trigger":
      return fail([...path, "type"], "compaction_trigger must be the last input item");
    case "item_reference":
      return fail([...path, "type"], "item_reference is not supported; send the referenced item itself");
    default:
      return fail([...path, "type"], `Unsupported input item type ${JSON.stringify(type)}; expected ${SERVED_TYPES}`);
  }
}

function messageText(value: unknown, path: Path): string {
  return typeof value === "string" ? value : partsText(value, path);
}

/** Joins the text of content parts (input_text, output_text, refusal); other media are refused. */
function partsText(value: unknown, path: Path): string {
  if (typeof value === "string") return value;
  const parts = asArray(value, path);
  return parts
    .map((raw, i) => {
      const part = asObject(raw, [...path, i]);
      const type = asString(required(part, "type", [...path, i]), [...path, i, "type"]);
      if (type === "input_text" || type === "output_text" || type === "text") {
        return asString(required(part, "text", [...path, i]), [...path, i, "text"]);
      }
      if (type === "refusal") return asString(required(part, "refusal", [...path, i]), [...path, i, "refusal"]);
      if (UNSUPPORTED_PARTS.includes(type)) fail([...path, i, "type"], `${type} is not supported by this model`);
      return fail([...path, i, "type"], `Unsupported content part type ${JSON.stringify(type)}`);
    })
    .join("");
}

/** The reasoning text: its `content` (reasoning_text parts) when present, else its summary. */
function reasoningText(item: Record<string, unknown>, path: Path): string {
  const content = optional(item, "content");
  const texts = (list: unknown, at: Path) =>
    asArray(list, at).map((raw, i) => {
      const part = asObject(raw, [...at, i]);
      return asString(required(part, "text", [...at, i]), [...at, i, "text"]);
    });
  if (content !== undefined) {
    const joined = texts(content, [...path, "content"]).join("");
    if (joined !== "") return joined;
  }
  const summary = optional(item, "summary");
  return summary === undefined ? "" : texts(summary, [...path, "summary"]).join("\n");
}

function optionalId(item: Record<string, unknown>, path: Path): { id?: string } {
  const id = optional(item, "id");
  return id === undefined ? {} : { id: asString(id, [...path, "id"]) };
}

function nonEmpty(value: unknown, path: Path): string {
  const text = asString(value, path);
  if (text === "") fail(path, "String should have at least 1 character");
  return text;
}
