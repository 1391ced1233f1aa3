/**
 * The subset of the OpenAI Responses API Frontier serves: validated request shapes (what
 * validate.ts returns), output items, the response object and its stream events.
 */

import type { ServerToolDeclaration } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { AnswerFormat } from "../../openai/response-format.ts";

export type InputRole = "user" | "assistant" | "system" | "developer";

/** A message item; `text` joins its text parts (input_text, output_text, refusal). */
export interface MessageItem {
  type: "message";
  role: InputRole;
  text: string;
  /** An item id a client replays (e.g. a `msg_` Frontier minted). */
  id?: string;
  /**
   * A `compaction` item's `encrypted_content` as the client sent it, until it is opened
   * (request/compaction-items.ts): then `text` is the summary the model sees and this is gone.
   */
  compaction?: string;
}

/**
 * A call the assistant made: `function_call` (a namespaced one under its offered name,
 * `<ns>.<name>`), or `custom_tool_call` (its raw `input` wrapped as the offered function's arguments).
 */
export interface FunctionCallItem {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  id?: string;
}

/** A call's output: `function_call_output`, or `custom_tool_call_output` for a custom tool. */
export interface FunctionCallOutputItem {
  type: "function_call_output";
  call_id: string;
  output: string;
}

export interface ReasoningItem {
  type: "reasoning";
  text: string;
  id?: string;
  /** The client's `encrypted_content`, as it sent it. */
  encrypted_content?: string;
  /**
   * After unsealing (edge/protocols/responses/request/encrypted-reasoning.ts): `verified` — Frontier sealed exactly
   * `text` for this tenant; `foreign` — a blob Frontier cannot open, rendered as context only.
   */
  sealed?: "verified" | "foreign";
}

/** What a `web_search_call` did: a search (with any `sources` it listed), opening a page, finding in one. */
export type WebSearchAction =
  | { type: "search"; query: string; sources: string[] }
  | { type: "open_page"; url: string }
  | { type: "find"; url: string; pattern: string }
  | { type: "other"; kind: string };

/**
 * A hosted web search: another provider's (kept verbatim, rendered readably) or Frontier's own — its
 * `ws_…` ID verifies and its `encrypted_content` (Frontier's extension field on the item,
 * edge/server-tools/sealed-hit.ts) opens; `result` is then the exact text the model read.
 */
export interface WebSearchCallItem {
  type: "web_search_call";
  id: string;
  status: string;
  action: WebSearchAction | undefined;
  /** The client's item, byte for byte (what a stored record replays). */
  json: string;
  encrypted_content?: string;
  result?: { text: string; isError: boolean; sameStep: boolean };
}

/**
 * `additional_tools` (role `developer`): tools made available at this item (Codex 0.171 sends its whole
 * tool set this way for its default model). Before the first turn they join the header's tools; later,
 * they render in place as a developer message and are callable from there on (additional-tools.ts).
 */
export interface AdditionalToolsItem {
  type: "additional_tools";
  id?: string;
  tools: FunctionTool[];
  /** Declared hosted tool types it holds that Frontier does not offer (named in x-frontier-tools-not-offered). */
  tools_not_offered: string[];
}

/**
 * `configuration_update`: settings for the responses after it, each in effect until a later update
 * replaces it (configuration-updates.ts). Never rendered.
 */
export interface ConfigurationUpdateItem {
  type: "configuration_update";
  id?: string;
  /** `reasoning.effort`; null: back to the request's own. Absent: unchanged. */
  reasoning_effort?: string | null;
  /** `text.format`. Absent: unchanged. */
  text_format?: AnswerFormat;
}

export type InputItem =
  | MessageItem
  | FunctionCallItem
  | FunctionCallOutputItem
  | ReasoningItem
  | WebSearchCallItem
  | AdditionalToolsItem
  | ConfigurationUpdateItem;

/** Where an offered tool came from (edge/protocols/responses/request/tools.ts). */
export type ToolOrigin =
  | { kind: "function" }
  | { kind: "namespace"; namespace: string; name: string }
  | { kind: "custom"; grammar?: FreeformGrammarSource; within?: { namespace: string; name: string } };

/** A custom tool's checked `format` grammar (edge/protocols/responses/request/tools.ts). */
export interface FreeformGrammarSource {
  syntax: "lark" | "regex";
  definition: string;
}

/** A tool as the model is offered it; `name` is the model-view name. */
export interface FunctionTool {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  strict: boolean | null;
  origin: ToolOrigin;
}

export type ToolChoice = "auto" | "required" | "none" | { type: "function"; name: string };

export interface ResponsesRequest {
  model: string;
  input: InputItem[];
  instructions: string | undefined;
  tools: FunctionTool[];
  /** Declared hosted tools Frontier never offers (`tool_search`, `local_shell`). */
  tools_not_offered: string[];
  /** Hosted web_search declarations (the worker offers them when it has a provider). */
  server_tools: ServerToolDeclaration[];
  /** `include: ["reasoning.encrypted_content"]`: reasoning items carry Frontier's sealed reasoning. */
  include_encrypted_reasoning: boolean;
  tool_choice: ToolChoice;
  parallel_tool_calls: boolean;
  max_output_tokens: number | undefined;
  temperature: number | undefined;
  top_p: number | undefined;
  store: boolean;
  stream: boolean;
  previous_response_id: string | undefined;
  /** `reasoning.effort`; anything but none/minimal turns the model's thinking on. */
  reasoning_effort: string | undefined;
  /** A client's conversation key (Codex sends one); used like Claude Code's session header. */
  prompt_cache_key: string | undefined;
  metadata: Record<string, string>;
  user: string | undefined;
  /** `text.format` (JSON formats constrained by grammar on the worker). */
  text_format: AnswerFormat;
  /**
   * The input ended with `{"type": "compaction_trigger"}` (Codex's remote compaction v2): the turn
   * writes a summary and its output carries one `compaction` item (request/summary-request.ts).
   */
  compaction_trigger?: true;
}

// ---------- output ----------

export interface OutputText {
  type: "output_text";
  text: string;
  annotations: [];
  logprobs: [];
}

export interface ReasoningText {
  type: "reasoning_text";
  text: string;
}

export type OutputItem =
  | { type: "message"; id: string; status: ItemStatus; role: "assistant"; content: OutputText[] }
  | {
      type: "reasoning";
      id: string;
      status: ItemStatus;
      summary: [];
      content: ReasoningText[];
      encrypted_content?: string;
    }
  | {
      type: "function_call";
      id: string;
      status: ItemStatus;
      call_id: string;
      name: string;
      namespace?: string;
      arguments: string;
    }
  | {
      type: "custom_tool_call";
      id: string;
      status: ItemStatus;
      call_id: string;
      name: string;
      namespace?: string;
      input: string;
    }
  | {
      type: "web_search_call";
      id: string;
      status: WebSearchStatus;
      action: { type: "search"; query: string; queries: string[]; sources?: { type: "url"; url: string }[] };
      /** Frontier's sealed result (what the model read), so a replay renders it exactly. */
      encrypted_content?: string;
    }
  /** Remote compaction's summary, sealed for the tenant (request/compaction-items.ts). */
  | { type: "compaction"; id: string; status: ItemStatus; encrypted_content: string };

export type ItemStatus = "in_progress" | "completed" | "incomplete";
export type WebSearchStatus = "in_progress" | "searching" | "completed" | "failed";

export type ResponseStatus = "in_progress" | "completed" | "incomplete" | "failed";

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: "max_output_tokens" } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: null };
  store: boolean;
  temperature: number;
  text: { format: TextFormatObject };
  tool_choice: ToolChoice;
  tools: Omit<FunctionTool, "origin">[];
  top_p: number;
  truncation: "disabled";
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

/** `text.format` as a response echoes it. */
export type TextFormatObject =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; description?: string; schema: Record<string, unknown>; strict: boolean };

/** A stream event before its `sequence_number` is stamped. */
export type ResponseStreamEvent = { type: string } & Record<string, unknown>;
