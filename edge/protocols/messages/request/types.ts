/** The validated, typed form of an Anthropic Messages request (parsed at the boundary). */
import type { ServerToolDeclaration } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";

export type Role = "user" | "assistant" | "system";

/**
 * A part of a `tool_result`'s content: text, a `tool_reference` (loads a deferred tool: advanced tool
 * use), or another block kind the edge renders as a placeholder.
 */
export type ToolResultPart =
  | { type: "text"; text: string }
  | { type: "tool_reference"; tool_name: string }
  | { type: "other"; kind: string };

/** One `web_search_result` entry. `text` is set only when its `encrypted_content` is Frontier's own
 * sealed text for this tenant (foreign-history.ts); a foreign hit renders as title, URL and age. */
export interface SearchHitInput {
  url: string;
  title: string;
  page_age: string | undefined;
  encrypted_content: string;
  text?: string | undefined;
}

export type WebSearchContent = { type: "hits"; hits: SearchHitInput[] } | { type: "error"; error_code: string };

/** A `web_fetch_result`: the document's visible text when it is a text source (or Frontier's own sealed page). */
export type WebFetchContent =
  | { type: "page"; url: string; title: string | undefined; retrieved_at: string | undefined; data: string | undefined }
  | { type: "error"; error_code: string };

export type InputBlock =
  | { type: "text"; text: string }
  /** `foreign`: the signature is not Frontier's (set false only once verified, foreign-history.ts). */
  | { type: "thinking"; thinking: string; signature: string; foreign: boolean }
  | { type: "redacted_thinking"; data: string; json: string }
  | { type: "server_tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "web_search_tool_result"; tool_use_id: string; content: WebSearchContent }
  | { type: "web_fetch_tool_result"; tool_use_id: string; content: WebFetchContent }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string | ToolResultPart[]; is_error: boolean }
  /** Any other block kind, kept verbatim (rendered as its JSON). */
  | { type: "opaque"; kind: string; json: string };

export interface InputMessage {
  role: Role;
  content: InputBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  /** `defer_loading: true`: out of the prompt until a `tool_reference` in a tool result names it. */
  defer_loading: boolean;
}

export type ToolChoiceSpec =
  | { type: "auto" | "any" | "none"; disable_parallel_tool_use: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use: boolean };

export type ThinkingSpec = { type: "enabled"; budget_tokens: number } | { type: "disabled" } | { type: "adaptive" };

export interface MessagesRequest {
  model: string;
  /** Required by /v1/messages; absent for count_tokens. */
  max_tokens: number | undefined;
  messages: InputMessage[];
  /** System blocks in order, the Claude Code billing header already dropped. */
  system: string[];
  tools: ToolSpec[];
  /** Hosted web_search / web_fetch declarations. */
  server_tools: ServerToolDeclaration[];
  /** Declared hosted tool types Frontier never offers (named in x-frontier-tools-not-offered). */
  tools_not_offered: string[];
  tool_choice: ToolChoiceSpec | undefined;
  thinking: ThinkingSpec | undefined;
  temperature: number | undefined;
  top_p: number | undefined;
  top_k: number | undefined;
  stop_sequences: string[];
  stream: boolean;
}
