/** The validated, typed form of an Anthropic Messages request (parsed at the boundary). */

export type Role = "user" | "assistant" | "system";

/** A part of a `tool_result`'s content: text, or another block kind the edge renders as a placeholder. */
export type ToolResultPart = { type: "text"; text: string } | { type: "other"; kind: string };

export type InputBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string | ToolResultPart[]; is_error: boolean }
  /** Any block Frontier did not make (redacted_thinking, server_tool_use, ...), kept verbatim. */
  | { type: "opaque"; kind: string; json: string };

export interface InputMessage {
  role: Role;
  content: InputBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
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
  tool_choice: ToolChoiceSpec | undefined;
  thinking: ThinkingSpec | undefined;
  temperature: number | undefined;
  top_p: number | undefined;
  top_k: number | undefined;
  stop_sequences: string[];
  stream: boolean;
}
