/**
 * The OpenAI error shape for the Responses routes: `{"error": {"message", "type", "param", "code"}}`
 * with `x-request-id`. The same ApiError drives both protocols; only the rendering differs.
 */
import { encodeSseJson } from "../../../shared/sse.ts";
import type { ApiError, ErrorType } from "../../core/errors.ts";

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's type names where they differ from Anthropic's. */
const TYPE_NAMES: Partial<Record<ErrorType, string>> = {
  api_error: "server_error",
  request_too_large: "invalid_request_error",
  rate_limit_error: "rate_limit_exceeded",
};

const DEFAULT_CODES: Partial<Record<ErrorType, string>> = {
  authentication_error: "invalid_api_key",
  request_too_large: "request_too_large",
  overloaded_error: "server_overloaded",
};

export function openAiErrorBody(error: ApiError): OpenAiErrorBody {
  return {
    error: {
      message: error.message,
      type: TYPE_NAMES[error.type] ?? error.type,
      param: error.options.param ?? null,
      code: error.options.code ?? DEFAULT_CODES[error.type] ?? null,
    },
  };
}

export function openAiErrorResponse(error: ApiError, requestId: string): Response {
  return new Response(JSON.stringify(openAiErrorBody(error)), {
    status: error.status,
    headers: {
      "content-type": "application/json",
      "x-request-id": requestId,
      "request-id": requestId,
      ...error.headers(),
    },
  });
}

/** The in-stream `error` event (after the response has started); `response.failed` follows it. */
export function encodeOpenAiStreamError(error: ApiError, sequenceNumber: number): string {
  const body = openAiErrorBody(error).error;
  return encodeSseJson("error", {
    type: "error",
    code: body.code ?? body.type,
    message: body.message,
    param: body.param,
    sequence_number: sequenceNumber,
  });
}
