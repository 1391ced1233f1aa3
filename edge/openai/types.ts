/**
 * The subset of the OpenAI Responses API Frontier serves: validated request shapes (what
 * validate.ts returns), output items, the response object and its stream events.
 */

export type InputRole = "user" | "assistant" | "system" | "developer";

/** A message item; `text` joins its text parts (input_text, output_text, refusal). */
export interface MessageItem {
  type: "message";
  role: InputRole;
  text: string;
  /** An item id a client replays (e.g. a `msg_` Frontier minted). */
  id?: string;
}

export interface FunctionCallItem {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
  id?: string;
}

export interface FunctionCallOutputItem {
  type: "function_call_output";
  call_id: string;
  output: string;
}

export interface ReasoningItem {
  type: "reasoning";
  text: string;
  id?: string;
}

export type InputItem = MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem;

export interface FunctionTool {
  type: "function";
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  strict: boolean | null;
}

export type ToolChoice = "auto" | "required" | "none" | { type: "function"; name: string };

export interface ResponsesRequest {
  model: string;
  input: InputItem[];
  instructions: string | undefined;
  tools: FunctionTool[];
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
  | { type: "reasoning"; id: string; status: ItemStatus; summary: []; content: ReasoningText[] }
  | {
      type: "function_call";
      id: string;
      status: ItemStatus;
      call_id: string;
      name: string;
      arguments: string;
    };

export type ItemStatus = "in_progress" | "completed" | "incomplete";

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
  text: { format: { type: "text" } };
  tool_choice: ToolChoice;
  tools: FunctionTool[];
  top_p: number;
  truncation: "disabled";
  usage: ResponseUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

/** A stream event before its `sequence_number` is stamped. */
export type ResponseStreamEvent = { type: string } & Record<string, unknown>;
