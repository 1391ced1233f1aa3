/** Folds Anthropic stream events into the non-streaming message JSON (one source of truth for both). */

import { checkNever } from "../../../../shared/check-never.ts";
import { ApiError } from "../../../core/errors.ts";
import type { AnthropicMessage, AnthropicStreamEvent, OutputBlock } from "./events.ts";

export class MessageAccumulator {
  #message: AnthropicMessage | undefined;
  #done = false;
  readonly #toolJson = new Map<number, string>();

  push(event: AnthropicStreamEvent): void {
    switch (event.type) {
      case "message_start":
        this.#message = { ...event.message, content: [], usage: { ...event.message.usage } };
        return;
      case "ping":
        return;
      case "content_block_start": {
        const started = event.content_block;
        const block: OutputBlock =
          started.type === "tool_use" || started.type === "server_tool_use"
            ? { type: started.type, id: started.id, name: started.name, input: {} }
            : { ...started };
        this.#require().content[event.index] = block;
        if (block.type === "tool_use" || block.type === "server_tool_use") this.#toolJson.set(event.index, "");
        return;
      }
      case "content_block_delta":
        this.#applyDelta(event.index, event.delta);
        return;
      case "content_block_stop":
        this.#finishBlock(event.index);
        return;
      case "message_delta": {
        const message = this.#require();
        message.stop_reason = event.delta.stop_reason;
        message.stop_sequence = event.delta.stop_sequence;
        message.usage = { ...event.usage };
        return;
      }
      case "message_stop":
        this.#done = true;
        return;
      default:
        checkNever(event, "stream event");
    }
  }

  /** The finished message; throws if the turn did not complete. */
  result(): AnthropicMessage {
    if (!this.#done || !this.#message) throw ApiError.internal("The turn did not complete");
    return this.#message;
  }

  #applyDelta(index: number, delta: Extract<AnthropicStreamEvent, { type: "content_block_delta" }>["delta"]): void {
    const block = this.#require().content[index];
    switch (delta.type) {
      case "text_delta":
        if (block?.type === "text") block.text += delta.text;
        return;
      case "thinking_delta":
        if (block?.type === "thinking") block.thinking += delta.thinking;
        return;
      case "signature_delta":
        if (block?.type === "thinking") block.signature = delta.signature;
        return;
      case "input_json_delta":
        this.#toolJson.set(index, (this.#toolJson.get(index) ?? "") + delta.partial_json);
        return;
      default:
        checkNever(delta, "block delta");
    }
  }

  #finishBlock(index: number): void {
    const block = this.#require().content[index];
    if (block?.type !== "tool_use" && block?.type !== "server_tool_use") return;
    const json = this.#toolJson.get(index) ?? "";
    block.input = parseToolInput(json);
  }

  #require(): AnthropicMessage {
    if (!this.#message) throw ApiError.internal("GPU worker protocol error: content before message_start");
    return this.#message;
  }
}

function parseToolInput(json: string): Record<string, unknown> {
  if (json.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw ApiError.internal("The model produced tool input that is not valid JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw ApiError.internal("The model produced tool input that is not a JSON object");
  }
  return value as Record<string, unknown>;
}
