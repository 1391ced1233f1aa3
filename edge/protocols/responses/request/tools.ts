/**
 * Responses `tools` as Codex sends them, mapped to what the model is offered:
 * - `function`: itself.
 * - `namespace` (e.g. Codex's `multi_agent_v1`): each of its function and custom tools, offered as
 *   `<ns>.<name>`; a call comes back as a `function_call` (or `custom_tool_call`) with the bare `name`
 *   and its `namespace` (Codex 0.171's default model: its code-mode `exec` is `functions.exec`, custom).
 * - `custom` (freeform, e.g. Codex's `apply_patch` with a Lark grammar): offered as a tool taking
 *   one string `input`; a call comes back as a `custom_tool_call` whose `input` is that raw text.
 *   `format: {type: "grammar", syntax: "lark" | "regex", definition}` is checked here (a grammar
 *   outside the subset shared/lark-grammar.ts serves is a 400 naming `format.definition`) and
 *   constrains the input whenever the worker constrains the call (tool_choice required or naming
 *   it); with tool_choice auto the call is free text. `format: {type: "text"}` (or none): free text.
 * - `web_search` / `web_search_preview`: a hosted tool Frontier runs inside the turn when the worker
 *   has a search provider (a `web_search_call` item); without one it is not offered, and the
 *   response names it in `x-frontier-tools-not-offered`.
 * - hosted tools Frontier does not serve (`tool_search`, `local_shell`): not offered to the model,
 *   never a 400; named in `x-frontier-tools-not-offered`.
 * Other hosted tools (file_search, code_interpreter, computer use, ...) are refused with a 400.
 */

import type { ServerToolDeclaration } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { grammarFromRegex, LarkGrammarError, parseLark } from "../../../../shared/lark/lark-grammar.ts";
import { LIMITS } from "../../../../shared/limits.ts";
import {
  asArray,
  asBoolean,
  asEnum,
  asObject,
  asString,
  fail,
  optional,
  type Path,
  required,
  uniqueToolName,
} from "../../../core/check.ts";
import { responsesWebSearch } from "../../../server-tools/declarations.ts";
import type { FreeformGrammarSource, FunctionTool, ToolOrigin } from "./types.ts";

/** Declared by Codex by default; accepted and not offered until the server-tools work serves them. */
const NOT_OFFERED = new Set(["tool_search", "local_shell"]);
/** Hosted web search: run by Frontier when the worker has a search provider (edge/server-tools/). */
const WEB_SEARCH_TYPES = new Set([
  "web_search",
  "web_search_preview",
  "web_search_2025_08_26",
  "web_search_preview_2025_03_11",
]);

export interface ValidatedTools {
  /** What the model is offered (model-view names). */
  tools: FunctionTool[];
  /** Declared tool types that were not offered, in order, without repeats. */
  notOffered: string[];
  /** Hosted web_search declarations. */
  serverTools: ServerToolDeclaration[];
}

/** The name a namespaced function is offered under (and replayed calls are rendered with). */
export function namespacedName(namespace: string, name: string): string {
  return `${namespace}.${name}`;
}

/** A custom tool's raw text as the arguments of the function it is offered as. */
export function customArguments(input: string): string {
  return JSON.stringify({ input });
}

/** The raw text back from the sampled arguments (the arguments themselves if they are not the wrapper). */
export function customInput(argumentsJson: string): string {
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    if (typeof parsed === "object" && parsed !== null && "input" in parsed && typeof parsed.input === "string") {
      return parsed.input;
    }
  } catch {
    // a call cut by max tokens: hand over what was sampled
  }
  return argumentsJson;
}

const CUSTOM_PARAMETERS = {
  type: "object",
  properties: { input: { type: "string", description: "The tool's input, as raw text." } },
  required: ["input"],
  additionalProperties: false,
};

/**
 * A list of tool declarations at `at` (`tools`, or an `additional_tools` item's `input.N.tools`).
 * `names` holds the offered names already declared in the request: a repeat is a 400.
 */
export function validateTools(value: unknown, at: Path = ["tools"], names = new Set<string>()): ValidatedTools {
  if (value === undefined) return { tools: [], notOffered: [], serverTools: [] };
  const list = asArray(value, at);
  const tools: FunctionTool[] = [];
  const notOffered: string[] = [];
  const serverTools: ServerToolDeclaration[] = [];
  list.forEach((entry, i) => {
    const path: Path = [...at, i];
    const tool = asObject(entry, path);
    const type = asString(required(tool, "type", path), [...path, "type"]);
    switch (type) {
      case "function":
        tools.push(
          functionTool(tool, path, uniqueToolName(tool, path, names, LIMITS.maxOpenAiToolNameLength), {
            kind: "function",
          }),
        );
        return;
      case "namespace": {
        const namespace = asString(required(tool, "name", path), [...path, "name"]);
        asArray(required(tool, "tools", path), [...path, "tools"]).forEach((inner, j) => {
          const innerPath: Path = [...path, "tools", j];
          const fn = asObject(inner, innerPath);
          const innerType = asString(required(fn, "type", innerPath), [...innerPath, "type"]);
          if (innerType !== "function" && innerType !== "custom")
            fail([...innerPath, "type"], "A namespace may only hold function and custom tools");
          // Both parts follow OpenAI's name rule; the offered `<ns>.<name>` is unique among all tools.
          uniqueToolName({ name: namespace }, path, new Set(), LIMITS.maxOpenAiToolNameLength);
          const name = uniqueToolName(fn, innerPath, new Set(), LIMITS.maxOpenAiToolNameLength);
          const offered = namespacedName(namespace, name);
          if (names.has(offered))
            fail([...innerPath, "name"], `Tool names must be unique; '${offered}' appears more than once`);
          names.add(offered);
          tools.push(
            innerType === "custom"
              ? customTool(fn, innerPath, offered, { namespace, name })
              : functionTool(fn, innerPath, offered, { kind: "namespace", namespace, name }),
          );
        });
        return;
      }
      case "custom":
        tools.push(customTool(tool, path, uniqueToolName(tool, path, names, LIMITS.maxOpenAiToolNameLength)));
        return;
      default:
        if (WEB_SEARCH_TYPES.has(type)) {
          if (serverTools.length > 0 || names.has("web_search"))
            fail([...path, "type"], "web_search is declared twice");
          serverTools.push(responsesWebSearch(tool, type, path));
          return;
        }
        if (!NOT_OFFERED.has(type)) {
          fail([...path, "type"], `Tool type '${type}' is not supported; function, namespace and custom tools are`);
        }
        if (!notOffered.includes(type)) notOffered.push(type);
    }
  });
  if (names.size > LIMITS.maxTools) fail(at, `At most ${LIMITS.maxTools} tools are allowed`);
  if (serverTools.length > 0 && names.has("web_search")) fail(at, "web_search is declared twice");
  return { tools, notOffered, serverTools };
}

/** A custom (freeform) tool offered under `name`: one raw-text `input`, its `format` checked. */
function customTool(
  tool: Record<string, unknown>,
  path: Path,
  name: string,
  within?: { namespace: string; name: string },
): FunctionTool {
  const description = optional(tool, "description");
  const grammar = customFormat(optional(tool, "format"), [...path, "format"]);
  return {
    type: "function",
    name,
    description: description === undefined ? null : asString(description, [...path, "description"]),
    parameters: CUSTOM_PARAMETERS,
    strict: null,
    origin: {
      kind: "custom",
      ...(grammar === undefined ? {} : { grammar }),
      ...(within === undefined ? {} : { within }),
    },
  };
}

/** A custom tool's `format`: undefined for free text, else its checked grammar. */
function customFormat(value: unknown, path: Path): FreeformGrammarSource | undefined {
  if (value === undefined) return undefined;
  const format = asObject(value, path);
  const type = asEnum(required(format, "type", path), [...path, "type"], ["text", "grammar"] as const);
  if (type === "text") return undefined;
  const syntax = asEnum(required(format, "syntax", path), [...path, "syntax"], ["lark", "regex"] as const);
  const definition = asString(required(format, "definition", path), [...path, "definition"]);
  try {
    if (syntax === "lark") parseLark(definition);
    else grammarFromRegex(definition);
  } catch (error) {
    if (error instanceof LarkGrammarError)
      fail([...path, "definition"], `Unsupported ${syntax} grammar: ${error.message}`);
    throw error;
  }
  return { syntax, definition };
}

/** A function tool offered to the model under `name` (already checked and unique). */
function functionTool(tool: Record<string, unknown>, path: Path, name: string, origin: ToolOrigin): FunctionTool {
  const description = optional(tool, "description");
  const parameters = optional(tool, "parameters");
  const strict = optional(tool, "strict");
  return {
    type: "function",
    name,
    description: description === undefined ? null : asString(description, [...path, "description"]),
    parameters:
      parameters === undefined ? { type: "object", properties: {} } : asObject(parameters, [...path, "parameters"]),
    strict: strict === undefined ? null : asBoolean(strict, [...path, "strict"]),
    origin,
  };
}
