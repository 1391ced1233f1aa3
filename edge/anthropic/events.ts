/** Anthropic Messages streaming events and message shapes, as the edge renders them. */

export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

export type StopReasonName = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

export type StartedBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, never> };

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
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

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
