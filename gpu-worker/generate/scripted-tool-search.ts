/**
 * The scripted test policy's deferred-tool steps (Anthropic tool search): on a user turn, a client
 * tool search (Claude Code's `ToolSearch`) selects one fixed deferred tool; once a `tool_reference`
 * has loaded a tool that the history has not called yet, that tool is called with fixed arguments.
 */
import type { Conversation } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { tryParseJson } from "../chat/json-text.ts";
import type { FixedToolCall } from "../chat/types.ts";

/** The deferred tool the scripted tool search selects: `lookup_invoice` of the tests' MCP server `catalog`. */
export const SCRIPTED_DEFERRED_TOOL = "mcp__catalog__lookup_invoice";

/** The value the scripted call of a loaded deferred tool gives each required string argument. */
export const SCRIPTED_DEFERRED_ARGUMENT = "frontier-deferred";

/** Claude Code's client-side tool search: `{ query }`, where `select:<name>` loads that tool. */
const TOOL_SEARCH = "ToolSearch";

/** The fixed tool search of a user turn, when the turn declares a tool search tool. */
export function scriptedToolSearchCall(tools: Conversation["tools"]): FixedToolCall | undefined {
  if (!tools.some((t) => t.name === TOOL_SEARCH)) return undefined;
  return { name: TOOL_SEARCH, argumentsJson: JSON.stringify({ query: `select:${SCRIPTED_DEFERRED_TOOL}` }) };
}

/** The call of the first tool a `tool_reference` loaded that the history has not called yet. */
export function scriptedReferencedToolCall(conversation: Conversation): FixedToolCall | undefined {
  const called = new Set<string>();
  for (const message of conversation.messages)
    for (const c of message.content) if (c.block.case === "toolUse") called.add(c.block.value.name);
  const tool = conversation.referencedTools.find((t) => !called.has(t.name));
  if (!tool) return undefined;
  return { name: tool.name, argumentsJson: JSON.stringify(requiredStringArguments(tool.inputSchemaJson)) };
}

/** `{ name: SCRIPTED_DEFERRED_ARGUMENT }` for each required property the schema types as a string. */
function requiredStringArguments(schemaJson: string): Record<string, string> {
  const schema = tryParseJson(schemaJson)?.value;
  if (typeof schema !== "object" || schema === null) return {};
  const { properties, required } = schema as { properties?: Record<string, { type?: unknown }>; required?: unknown };
  if (!Array.isArray(required)) return {};
  const args: Record<string, string> = {};
  for (const name of required)
    if (typeof name === "string" && properties?.[name]?.type === "string") args[name] = SCRIPTED_DEFERRED_ARGUMENT;
  return args;
}
