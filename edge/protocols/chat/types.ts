/**
 * The subset of OpenAI Chat Completions Frontier serves: the validated request (what validate.ts
 * returns) and the `chat.completion` / `chat.completion.chunk` shapes it renders.
 */

import type { AnswerFormat } from "../openai/response-format.ts";

export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One validated message; text parts are joined, reasoning a client replays is kept. */
export type ChatMessage =
  | { role: "system"; text: string }
  | { role: "developer"; text: string }
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; reasoning: string; toolCalls: ChatToolCall[] }
  | { role: "tool"; toolCallId: string; text: string };

export interface ChatFunctionTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export type ChatToolChoice = "auto" | "none" | "required" | { name: string };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools: ChatFunctionTool[];
  toolChoice: ChatToolChoice;
  parallelToolCalls: boolean;
  maxTokens: number | undefined;
  temperature: number | undefined;
  topP: number | undefined;
  seed: number | undefined;
  stop: string[];
  /** `reasoning_effort`; anything but none/minimal turns the model's thinking on. */
  reasoningEffort: string | undefined;
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with empty `choices` carries the usage. */
  includeUsage: boolean;
  /** A client's conversation key; routes like the session headers do. */
  promptCacheKey: string | undefined;
  /** `response_format`: the answer's format (JSON ones constrained by grammar on the worker). */
  responseFormat: AnswerFormat;
}

// ---------- output ----------

export type ChatFinishReason = "stop" | "length" | "tool_calls";

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export interface ChatToolCallObject {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: {
    index: 0;
    message: {
      role: "assistant";
      content: string | null;
      reasoning_content?: string;
      tool_calls?: ChatToolCallObject[];
      refusal: null;
    };
    logprobs: null;
    finish_reason: ChatFinishReason;
  }[];
  usage: ChatUsage;
}

export interface ChatDelta {
  role?: "assistant";
  content?: string;
  reasoning_content?: string;
  tool_calls?: {
    index: number;
    id?: string;
    type?: "function";
    function: { name?: string; arguments: string };
  }[];
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  system_fingerprint: null;
  choices: { index: 0; delta: ChatDelta; logprobs: null; finish_reason: ChatFinishReason | null }[];
  usage?: ChatUsage | null;
}
