import {
  type Conversation,
  type Message,
  type ResponseFormat,
  ResponseFormatType,
  Role,
  ToolChoiceMode,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { SchemaGrammarError } from "../chat/grammar/json-schema-grammar.ts";
import { tryParseJson } from "../chat/json-text.ts";
import type { ChatFormat, FixedToolCall } from "../chat/types.ts";
import { scriptedReferencedToolCall, scriptedToolSearchCall } from "./scripted-tool-search.ts";

/** The test-only sampling policies (FRONTIER_TEST_POLICY); none is on by default. */
export type TestPolicyName = "scripted-tools";

/** Commands the test-only scripted policy makes the model call: harmless, fixed, never chosen by the model. */
export const SCRIPTED_BASH_COMMANDS = ["echo frontier-one", "echo frontier-two"] as const;

/**
 * A user turn whose text holds this marker is answered in plain text by the scripted policy: it lets
 * a test reach a client's no-tool path (Qwen Code extracts memories only after a text answer).
 */
export const SCRIPTED_NO_TOOLS_MARKER = "[frontier:no-tools]";

/** The query the scripted policy's forced web_search asks (tests' fake SearXNG answers it). */
export const SCRIPTED_SEARCH_QUERY = "frontier scripted search";

/**
 * The script Codex's code-mode `exec` tool (`functions.exec`, a freeform JavaScript input: Codex 0.171's
 * default model) runs for a command: its nested `exec_command` tool, then the output as the result.
 */
export function scriptedCodeModeScript(command: string): string {
  return `const r = await tools.exec_command({ cmd: ${JSON.stringify(command)} });\ntext(r.output);`;
}

/** Shell tools the scripted policy drives, by client: the tool's name and its arguments for a command. */
const SCRIPTED_SHELL_TOOLS: readonly { name: string; args: (command: string) => Record<string, string> }[] = [
  { name: "Bash", args: (command) => ({ command }) }, // Claude Code
  { name: "exec_command", args: (cmd) => ({ cmd }) }, // Codex CLI
  { name: "functions.exec", args: (command) => ({ input: scriptedCodeModeScript(command) }) }, // Codex, code mode
  { name: "run_shell_command", args: (command) => ({ command }) }, // Qwen Code
  { name: "bash", args: (command) => ({ command }) }, // opencode
];

/**
 * The grammar that constrains this turn, if any.
 * - `tool_choice` any / tool: a grammar built from the tools' JSON schemas forces a valid call.
 * - The test-only `scripted-tools` policy (worker configuration, never a request field): on a user
 *   turn it forces two fixed harmless calls of the client's shell tool (Claude Code's `Bash`,
 *   Codex's `exec_command` or, with its default model, its code-mode `functions.exec` running that
 *   same command, Qwen Code's `run_shell_command`, opencode's `bash`; one where a call
 *   ends the generation, as in harmony: `format.maxCallsPerTurn`); after tool results, a short
 *   plain-text answer. Every family writes them in its own markup (tested per family against
 *   llama.cpp in the engine tier).
 *   With a forced `tool_choice` that allows parallel calls, it requires at least two of them.
 * - A JSON `response_format`: the answer follows its schema; with tool_choice auto and tools, the
 *   turn may call a tool instead (never under the scripted policy: a random model must not choose
 *   calls a real client runs). A forced tool_choice wins: the format applies to the answer after.
 *   Without a shell tool, a declared tool search (Claude Code's `ToolSearch`) or hosted web_search
 *   (or web_fetch) gets one fixed call, and a deferred tool a `tool_reference` loaded gets one
 *   (`scripted-tool-search.ts`).
 */
export function grammarForTurn(
  format: ChatFormat,
  conversation: Conversation,
  thinkingOpen: boolean,
  testPolicy: TestPolicyName | undefined,
  responseFormat?: ResponseFormat,
): string | undefined {
  const choice = conversation.toolChoice;
  // The header's tools and the deferred ones a tool_reference loaded: both callable, both forceable.
  const tools = [...conversation.tools, ...conversation.referencedTools];
  if (tools.length > 0 && choice) {
    const parallel = !choice.disableParallelToolUse;
    // A random model almost never continues past its first call; the scripted policy makes a forced
    // parallel turn carry 2-3 calls, so benchmarks and tests exercise parallel calls.
    const minCalls = testPolicy === "scripted-tools" ? 2 : 1;
    const firstCallIndex = callsIn(conversation);
    if (choice.mode === ToolChoiceMode.ANY)
      return format.toolCallGrammar({ tools, choice: "any", parallel, minCalls, thinkingOpen, firstCallIndex });
    if (choice.mode === ToolChoiceMode.TOOL) {
      const name = { name: choice.name };
      return format.toolCallGrammar({ tools, choice: name, parallel, minCalls, thinkingOpen, firstCallIndex });
    }
  }
  if (testPolicy === "scripted-tools") {
    // Claude Code appends `role: "system"` messages after the user turn: look past them.
    const last = conversation.messages.findLast((m) => m.role !== Role.SYSTEM);
    const shell = SCRIPTED_SHELL_TOOLS.find((s) => tools.some((t) => t.name === s.name));
    const toolsAllowed = !choice || choice.mode !== ToolChoiceMode.NONE;
    if (last && isUserTextTurn(last) && shell && toolsAllowed && !asksForNoTools(last)) {
      const calls = SCRIPTED_BASH_COMMANDS.map((command) => ({
        name: shell.name,
        argumentsJson: JSON.stringify(shell.args(command)),
      }));
      return format.fixedToolCallsGrammar(calls, thinkingOpen, callsIn(conversation));
    }
    const scripted = last && toolsAllowed ? scriptedCall(conversation, tools, last) : undefined;
    if (scripted) return format.fixedToolCallsGrammar([scripted], thinkingOpen, callsIn(conversation));
  }
  if (responseFormat !== undefined && responseFormat.type !== ResponseFormatType.TEXT) {
    const callsAllowed = tools.length > 0 && (choice?.mode ?? ToolChoiceMode.AUTO) === ToolChoiceMode.AUTO;
    return format.answerGrammar({
      schema: answerSchema(responseFormat),
      strict: responseFormat.strict,
      field: responseFormat.field || "response_format",
      thinkingOpen,
      calls:
        callsAllowed && testPolicy !== "scripted-tools"
          ? { tools, choice: "any", parallel: !choice?.disableParallelToolUse, firstCallIndex: callsIn(conversation) }
          : undefined,
    });
  }
  if (testPolicy === "scripted-tools") return format.plainTextGrammar(thinkingOpen);
  return undefined;
}

/**
 * Without a shell tool: on a user turn, a tool search (selecting the fixed deferred tool) or a hosted
 * web call; after tool results, the call of a deferred tool a `tool_reference` loaded and the
 * history has not called.
 */
function scriptedCall(
  conversation: Conversation,
  tools: Conversation["tools"],
  last: Message,
): FixedToolCall | undefined {
  if (isUserTextTurn(last)) return scriptedToolSearchCall(tools) ?? scriptedHostedCall(tools, last);
  return last.role === Role.USER ? scriptedReferencedToolCall(conversation) : undefined;
}

/** The answer's schema: undefined (any JSON object) for json_object or an empty schema. */
function answerSchema(responseFormat: ResponseFormat): unknown {
  if (responseFormat.type !== ResponseFormatType.JSON_SCHEMA || responseFormat.schemaJson.trim() === "")
    return undefined;
  const parsed = tryParseJson(responseFormat.schemaJson);
  if (parsed === undefined)
    throw new SchemaGrammarError("the schema is not valid JSON", responseFormat.field || "response_format");
  return parsed.value;
}

/**
 * Web tools without a shell tool: one web_search (or Claude Code's WebSearch, whose own request
 * declares only the hosted web_search) for the fixed query, else one web_fetch of the first
 * http(s) URL the user's turn names.
 */
function scriptedHostedCall(tools: Conversation["tools"], last: Message): FixedToolCall | undefined {
  // web_search: the hosted tool itself; WebSearch: Claude Code's client tool, which runs its own
  // request with the hosted tool.
  const search = tools.find((t) => t.name === "web_search" || t.name === "WebSearch");
  if (search) return { name: search.name, argumentsJson: JSON.stringify({ query: SCRIPTED_SEARCH_QUERY }) };
  if (!tools.some((t) => t.name === "web_fetch")) return undefined;
  const text = last.content.map((c) => (c.block.case === "text" ? c.block.value.text : "")).join("\n");
  const url = /https?:\/\/[^\s"'<>]+/.exec(text)?.[0];
  return url ? { name: "web_fetch", argumentsJson: JSON.stringify({ url }) } : undefined;
}

/** How many tool calls the history holds (Kimi numbers a new call after them). */
function callsIn(conversation: Conversation): number {
  let n = 0;
  for (const message of conversation.messages) for (const c of message.content) if (c.block.case === "toolUse") n++;
  return n;
}

function isUserTextTurn(message: Message): boolean {
  if (message.role !== Role.USER) return false;
  return message.content.every((c) => c.block.case !== "toolResult") && message.content.length > 0;
}

function asksForNoTools(message: Message): boolean {
  return message.content.some((c) => c.block.case === "text" && c.block.value.text.includes(SCRIPTED_NO_TOOLS_MARKER));
}
