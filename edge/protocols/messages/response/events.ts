/** Anthropic Messages streaming events and message shapes, as the edge renders them. */

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  /** Hosted tool calls Frontier ran in this turn (present once it ran one). */
  server_tool_use?: { web_search_requests: number; web_fetch_requests: number };
}

export type StopReasonName = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn";

export interface WebSearchResult {
  type: "web_search_result";
  url: string;
  title: string;
  page_age: string | null;
  /** Frontier's AEAD of what the model read of this hit (edge/core/sealed-text.ts, purpose web_search_hit). */
  encrypted_content: string;
}

export type WebSearchToolResultBlock = {
  type: "web_search_tool_result";
  tool_use_id: string;
  content: WebSearchResult[] | { type: "web_search_tool_result_error"; error_code: string };
};

export type WebFetchToolResultBlock = {
  type: "web_fetch_tool_result";
  tool_use_id: string;
  content:
    | {
        type: "web_fetch_result";
        url: string;
        retrieved_at: string;
        content: {
          type: "document";
          source: { type: "text"; media_type: "text/plain"; data: string };
          title: string | null;
        };
      }
    | { type: "web_fetch_tool_error"; error_code: string };
};

/** A hosted tool's result block: complete in its content_block_start, as Anthropic streams it. */
export type ServerToolResultOutput = WebSearchToolResultBlock | WebFetchToolResultBlock;

export type StartedBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, never> }
  | { type: "server_tool_use"; id: string; name: string; input: Record<string, never> }
  | ServerToolResultOutput;

export type BlockDelta =
  | { type: "text_delta"; text: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string }
  | { type: "input_json_delta"; partial_json: string };

export interface MessageStartPayload {
  id: string;
  type: "message";
  role: "assistant";
  content: [];
  model: string;
  stop_reason: null;
  stop_sequence: null;
  usage: AnthropicUsage;
}

export type AnthropicStreamEvent =
  | { type: "message_start"; message: MessageStartPayload }
  | { type: "ping" }
  | { type: "content_block_start"; index: number; content_block: StartedBlock }
  | { type: "content_block_delta"; index: number; delta: BlockDelta }
  | { type: "content_block_stop"; index: number }
  | {
      type: "message_delta";
      delta: { stop_reason: StopReasonName; stop_sequence: string | null };
      usage: AnthropicUsage;
    }
  | { type: "message_stop" };

export type OutputBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "server_tool_use"; id: string; name: string; input: Record<string, unknown> }
  | ServerToolResultOutput;

export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: OutputBlock[];
  stop_reason: StopReasonName | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}
