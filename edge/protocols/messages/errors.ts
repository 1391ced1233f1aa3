/** Anthropic's error shape: `{"type": "error", "error": {"type", "message"}, "request_id"}` with `request-id`. */
import type { ApiError, ErrorType } from "../../core/errors.ts";

export interface AnthropicErrorBody {
  type: "error";
  error: { type: ErrorType; message: string };
  request_id: string;
}

export function anthropicErrorBody(error: ApiError, requestId: string): AnthropicErrorBody {
  return { type: "error", error: { type: error.type, message: error.message }, request_id: requestId };
}

export function anthropicErrorResponse(error: ApiError, requestId: string): Response {
  return new Response(JSON.stringify(anthropicErrorBody(error, requestId)), {
    status: error.status,
    headers: { "content-type": "application/json", "request-id": requestId, ...error.headers() },
  });
}
