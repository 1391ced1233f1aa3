/**
 * The Chat Completions TurnRenderer: the worker's protocol-neutral events → `chat.completion.chunk`
 * SSE (`data:` lines only, ending with `data: [DONE]`) and the same turn as one `chat.completion`.
 * Reasoning streams as `reasoning_content` deltas, as llama.cpp and vLLM send it; with
 * `stream_options.include_usage` a last chunk with empty `choices` carries the usage.
 */
import {
  type GenerateEvent,
  type PromptProcessed,
  type Stop,
  StopReason,
  WorkerErrorCode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { ApiError } from "../../core/errors.ts";
import type { RenderedEvent, TurnRenderer } from "../../turn/turn-driver.ts";
import { workerErrorToApiError } from "../../worker/worker-errors.ts";
import { openAiErrorBody } from "../openai/errors.ts";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatDelta,
  ChatFinishReason,
  ChatRequest,
  ChatToolCallObject,
  ChatUsage,
} from "./types.ts";

export class ChatTurn implements TurnRenderer {
  prompt: PromptProcessed | undefined;
  /** Call IDs of the tool calls this turn made, in order. */
  readonly toolCallIds: string[] = [];
  readonly keepAlive = ": keep-alive\n\n";
  #id = "";
  #text = "";
  #reasoning = "";
  readonly #calls: ChatToolCallObject[] = [];
  /** Worker tool-call index → position in `#calls`. */
  readonly #callIndex = new Map<number, number>();
  #finish: ChatFinishReason | undefined;
  #usage: ChatUsage | undefined;

  constructor(
    readonly request: ChatRequest,
    readonly createdAt: number,
  ) {}

  get stopped(): boolean {
    return this.#finish !== undefined;
  }

  /** The completion id (`chatcmpl-…`), known once the prompt event arrived. */
  get id(): string {
    return this.#id;
  }

  logFields(): Record<string, unknown> {
    return { finish: this.#finish ?? "incomplete", calls: this.toolCallIds.length };
  }

  push(event: GenerateEvent): RenderedEvent[] {
    if (this.stopped) return [];
    const e = event.event;
    switch (e.case) {
      case "prompt":
        if (this.prompt) return [];
        this.prompt = e.value;
        this.#id = e.value.messageId;
        return [this.#chunk({ role: "assistant", content: "" })];
      case "keepAlive":
        return [{ sse: this.keepAlive, ping: true }];
      case "textDelta":
        this.#requirePrompt();
        if (e.value.text === "") return [];
        this.#text += e.value.text;
        return [this.#chunk({ content: e.value.text })];
      case "thinkingDelta":
        this.#requirePrompt();
        if (e.value.text === "") return [];
        this.#reasoning += e.value.text;
        return [this.#chunk({ reasoning_content: e.value.text })];
      case "thinkingEnd":
      case "toolCallEnd":
        return [];
      case "toolCallStart": {
        this.#requirePrompt();
        const index = this.#calls.length;
        this.#callIndex.set(e.value.index, index);
        this.#calls.push({ id: e.value.id, type: "function", function: { name: e.value.name, arguments: "" } });
        this.toolCallIds.push(e.value.id);
        const start = {
          index,
          id: e.value.id,
          type: "function" as const,
          function: { name: e.value.name, arguments: "" },
        };
        return [this.#chunk({ tool_calls: [start] })];
      }
      case "toolCallDelta": {
        const index = this.#callIndex.get(e.value.index);
        const call = index === undefined ? undefined : this.#calls[index];
        if (index === undefined || !call)
          throw protocolError(`arguments for tool call ${e.value.index} before its start`);
        if (e.value.argumentsJson === "") return [];
        call.function.arguments += e.value.argumentsJson;
        return [this.#chunk({ tool_calls: [{ index, function: { arguments: e.value.argumentsJson } }] })];
      }
      case "stop":
        return [this.#stop(e.value)];
      case "error":
        throw e.value.code === WorkerErrorCode.UNKNOWN_TOOL_USE_ID
          ? unknownToolCallId(e.value.param)
          : workerErrorToApiError(e.value);
      case undefined:
        return [];
      default:
        throw protocolError("an unknown worker event");
    }
  }

  finish(): void {
    if (!this.stopped) throw ApiError.overloaded("The GPU worker ended the stream before the turn finished; retry");
  }

  body(): ChatCompletion {
    if (!this.#finish || !this.#usage) throw ApiError.internal("The turn did not complete");
    const message: ChatCompletion["choices"][number]["message"] = {
      role: "assistant",
      content: this.#text === "" && this.#calls.length > 0 ? null : this.#text,
      refusal: null,
    };
    if (this.#reasoning !== "") message.reasoning_content = this.#reasoning;
    if (this.#calls.length > 0) message.tool_calls = this.#calls;
    return {
      id: this.#id,
      object: "chat.completion",
      created: this.createdAt,
      model: this.request.model,
      system_fingerprint: null,
      choices: [{ index: 0, message, logprobs: null, finish_reason: this.#finish }],
      usage: this.#usage,
    };
  }

  /** OpenAI's in-stream error: a `data:` line holding the error object (the SDK raises it). */
  streamError(error: ApiError): string {
    return `data: ${JSON.stringify(openAiErrorBody(error))}\n\n`;
  }

  #stop(stop: Stop): RenderedEvent {
    this.#requirePrompt();
    if (stop.reason === StopReason.CANCELLED) throw ApiError.overloaded("The GPU worker cancelled this turn; retry");
    const cached = stop.usage?.cachedTokens ?? this.prompt?.cachedTokens ?? 0;
    const promptTokens = (stop.usage?.inputTokens ?? 0) + cached;
    const completion = stop.usage?.outputTokens ?? 0;
    this.#usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
      prompt_tokens_details: { cached_tokens: cached },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
    const finish = finishReason(stop.reason, this.#calls.length > 0);
    let sse = this.#chunk({}, finish).sse;
    this.#finish = finish;
    if (this.request.includeUsage) sse += this.#data({ ...this.#base(), choices: [], usage: this.#usage });
    return { sse: `${sse}data: [DONE]\n\n`, final: true };
  }

  #chunk(delta: ChatDelta, finish: ChatFinishReason | null = null): RenderedEvent {
    const chunk: ChatCompletionChunk = {
      ...this.#base(),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (this.request.includeUsage) chunk.usage = null;
    return { sse: this.#data(chunk) };
  }

  #base() {
    return {
      id: this.#id,
      object: "chat.completion.chunk" as const,
      created: this.createdAt,
      model: this.request.model,
      system_fingerprint: null,
    };
  }

  #data(chunk: ChatCompletionChunk): string {
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  #requirePrompt(): void {
    if (!this.prompt) throw protocolError("content before the prompt event");
  }
}

function finishReason(reason: StopReason, calledTools: boolean): ChatFinishReason {
  switch (reason) {
    case StopReason.MAX_TOKENS:
      return "length";
    case StopReason.TOOL_USE:
      return "tool_calls";
    case StopReason.END_TURN:
    case StopReason.STOP_SEQUENCE:
    case StopReason.UNSPECIFIED:
    case StopReason.CANCELLED:
    case StopReason.PAUSE_TURN:
      return calledTools ? "tool_calls" : "stop";
  }
}

/** A tool message whose call has no live or saved state, and no replayed assistant tool_calls. */
function unknownToolCallId(callId: string): ApiError {
  return new ApiError(
    "invalid_request_error",
    `No tool call found for the tool message with tool_call_id '${callId}': it has no live or saved state on the server (it may have expired, or the system prompt or tools changed). Send the full history, including the assistant message whose tool_calls contain this id.`,
    { param: "messages", code: "unknown_tool_call_id" },
  );
}

function protocolError(what: string): ApiError {
  return ApiError.internal(`GPU worker protocol error: ${what}`);
}
