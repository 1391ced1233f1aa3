/**
 * Turns the worker's protocol-neutral event stream into Anthropic stream events. One instance per
 * turn; the same output feeds the SSE writer and the non-streaming JSON accumulator.
 */
import {
  type GenerateEvent,
  type PromptProcessed,
  type Stop,
  StopReason,
} from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { checkNever } from "../../../../shared/check-never.ts";
import { ApiError } from "../../../core/errors.ts";
import { workerErrorToApiError } from "../../../worker/worker-errors.ts";
import type { AnthropicStreamEvent, AnthropicUsage, ServerToolResultOutput, StopReasonName } from "./events.ts";

type OpenBlock = { index: number; kind: "text" | "thinking" } | { index: number; kind: "tool_use"; toolIndex: number };

export class TurnAssembler {
  /** The worker's cache decision, once the `prompt` event arrived. */
  prompt: PromptProcessed | undefined;
  /** IDs of the tool calls this turn made, in order. */
  readonly toolUseIds: string[] = [];
  /** IDs of the hosted tool calls Frontier ran in this turn, in order. */
  readonly serverToolUseIds: string[] = [];
  stopReason: StopReasonName | undefined;
  #open: OpenBlock | undefined;
  #nextIndex = 0;

  constructor(readonly model: string) {}

  get stopped(): boolean {
    return this.stopReason !== undefined;
  }

  /**
   * Feed one worker event. Throws an ApiError for a worker error event or a protocol violation.
   * A `serverToolResult` event comes with its Anthropic block, rendered (and sealed) by the caller.
   */
  push(event: GenerateEvent, result?: ServerToolResultOutput): AnthropicStreamEvent[] {
    if (this.stopped) return [];
    const e = event.event;
    switch (e.case) {
      case "prompt":
        if (this.prompt) return [];
        this.prompt = e.value;
        return [{ type: "message_start", message: this.#startPayload(e.value) }];
      case "keepAlive":
        return [{ type: "ping" }];
      case "textDelta":
        if (e.value.text === "") return [];
        return [...this.#ensure("text"), this.#delta({ type: "text_delta", text: e.value.text })];
      case "thinkingDelta":
        if (e.value.text === "") return [];
        return [...this.#ensure("thinking"), this.#delta({ type: "thinking_delta", thinking: e.value.text })];
      case "thinkingEnd":
        return [
          ...this.#ensure("thinking"),
          this.#delta({ type: "signature_delta", signature: e.value.signature }),
          ...this.#close(),
        ];
      case "toolCallStart": {
        this.#requirePrompt();
        const out = this.#close();
        const index = this.#nextIndex++;
        this.#open = { index, kind: "tool_use", toolIndex: e.value.index };
        this.toolUseIds.push(e.value.id);
        out.push({
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: e.value.id, name: e.value.name, input: {} },
        });
        return out;
      }
      case "toolCallDelta":
        this.#requireTool(e.value.index);
        if (e.value.argumentsJson === "") return [];
        return [this.#delta({ type: "input_json_delta", partial_json: e.value.argumentsJson })];
      case "toolCallEnd":
        this.#requireTool(e.value.index);
        return this.#close();
      case "serverToolCall": {
        this.#requirePrompt();
        const out = this.#close();
        const index = this.#nextIndex++;
        this.serverToolUseIds.push(e.value.id);
        out.push({
          type: "content_block_start",
          index,
          content_block: { type: "server_tool_use", id: e.value.id, name: e.value.name, input: {} },
        });
        out.push({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: e.value.inputJson },
        });
        out.push({ type: "content_block_stop", index });
        return out;
      }
      case "serverToolResult": {
        this.#requirePrompt();
        if (!result) throw protocolError("a hosted tool result without its rendered block");
        const out = this.#close();
        const index = this.#nextIndex++;
        out.push({ type: "content_block_start", index, content_block: result });
        out.push({ type: "content_block_stop", index });
        return out;
      }
      case "stop":
        return this.#stop(e.value);
      case "error":
        throw workerErrorToApiError(e.value);
      case undefined:
        return [];
      default:
        return checkNever(e, "worker event");
    }
  }

  /** The worker's stream ended: it must have sent `stop`. */
  finish(): void {
    if (!this.stopped) throw ApiError.overloaded("The GPU worker ended the stream before the turn finished; retry");
  }

  #startPayload(prompt: PromptProcessed) {
    return {
      id: prompt.messageId,
      type: "message" as const,
      role: "assistant" as const,
      content: [] as [],
      model: this.model,
      stop_reason: null,
      stop_sequence: null,
      usage: usage(prompt.promptTokens - prompt.cachedTokens, prompt.cachedTokens, 0),
    };
  }

  #stop(stop: Stop): AnthropicStreamEvent[] {
    this.#requirePrompt();
    const reason = stopReasonName(stop.reason);
    const out = this.#close();
    const prompt = this.prompt;
    const input = stop.usage?.inputTokens ?? (prompt ? prompt.promptTokens - prompt.cachedTokens : 0);
    const cached = stop.usage?.cachedTokens ?? prompt?.cachedTokens ?? 0;
    this.stopReason = reason;
    out.push({
      type: "message_delta",
      delta: { stop_reason: reason, stop_sequence: reason === "stop_sequence" ? stop.stopSequence : null },
      usage: withServerToolUse(usage(input, cached, stop.usage?.outputTokens ?? 0), stop),
    });
    out.push({ type: "message_stop" });
    return out;
  }

  #ensure(kind: "text" | "thinking"): AnthropicStreamEvent[] {
    this.#requirePrompt();
    if (this.#open?.kind === kind) return [];
    const out = this.#close();
    const index = this.#nextIndex++;
    this.#open = { index, kind };
    out.push({
      type: "content_block_start",
      index,
      content_block: kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" },
    });
    return out;
  }

  #delta(delta: Extract<AnthropicStreamEvent, { type: "content_block_delta" }>["delta"]): AnthropicStreamEvent {
    if (!this.#open) throw protocolError("a delta outside of a content block");
    return { type: "content_block_delta", index: this.#open.index, delta };
  }

  #close(): AnthropicStreamEvent[] {
    if (!this.#open) return [];
    const index = this.#open.index;
    this.#open = undefined;
    return [{ type: "content_block_stop", index }];
  }

  #requirePrompt(): void {
    if (!this.prompt) throw protocolError("content before the prompt event");
  }

  #requireTool(toolIndex: number): void {
    if (this.#open?.kind !== "tool_use" || this.#open.toolIndex !== toolIndex) {
      throw protocolError(`tool call ${toolIndex} is not the open content block`);
    }
  }
}

function usage(input: number, cached: number, output: number): AnthropicUsage {
  return {
    input_tokens: Math.max(0, input),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: output,
  };
}

/** `usage.server_tool_use`, once the turn ran a hosted tool. */
function withServerToolUse(base: AnthropicUsage, stop: Stop): AnthropicUsage {
  const searches = stop.usage?.webSearchRequests ?? 0;
  const fetches = stop.usage?.webFetchRequests ?? 0;
  if (searches === 0 && fetches === 0) return base;
  return { ...base, server_tool_use: { web_search_requests: searches, web_fetch_requests: fetches } };
}

function stopReasonName(reason: StopReason): StopReasonName {
  switch (reason) {
    case StopReason.UNSPECIFIED:
    case StopReason.END_TURN:
      return "end_turn";
    case StopReason.MAX_TOKENS:
      return "max_tokens";
    case StopReason.STOP_SEQUENCE:
      return "stop_sequence";
    case StopReason.TOOL_USE:
      return "tool_use";
    case StopReason.PAUSE_TURN:
      return "pause_turn";
    case StopReason.CANCELLED:
      throw ApiError.overloaded("The GPU worker cancelled this turn; retry");
    default:
      return checkNever(reason, "stop reason");
  }
}

function protocolError(what: string): ApiError {
  return ApiError.internal(`GPU worker protocol error: ${what}`);
}
