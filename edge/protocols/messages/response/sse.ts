/** Anthropic events → SSE bytes. */
import { encodeSseJson } from "../../../../shared/sse.ts";
import type { ApiError } from "../../../core/errors.ts";
import { anthropicErrorBody } from "../errors.ts";
import type { AnthropicStreamEvent } from "./events.ts";

export function encodeAnthropicEvent(event: AnthropicStreamEvent): string {
  return encodeSseJson(event.type, event);
}

/** Anthropic's in-stream error event (after the response has started). */
export function encodeAnthropicError(error: ApiError, requestId: string): string {
  return encodeSseJson("error", anthropicErrorBody(error, requestId));
}

export const SSE_PING = encodeAnthropicEvent({ type: "ping" });
