/**
 * Google's error shape for the Gemini API routes (`/v1beta/…`): `{"error": {"code", "message",
 * "status"}}` with the google.rpc status name, plus `details` where Google sends them — a
 * `BadRequest` naming the field of a 400, a `RetryInfo` with the delay of a 429 or 503 (Gemini CLI
 * reads it to back off). Overloaded (Anthropic's 529) is Google's `503 UNAVAILABLE`. The same
 * ApiError drives every protocol; only the rendering differs.
 */
import type { ApiError } from "../../core/errors.ts";

/** google.rpc.Code names, as the Gemini API spells them in `error.status`. */
export type GoogleStatus =
  | "INVALID_ARGUMENT"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED"
  | "NOT_FOUND"
  | "ABORTED"
  | "RESOURCE_EXHAUSTED"
  | "INTERNAL"
  | "UNAVAILABLE"
  | "DEADLINE_EXCEEDED";

type ErrorDetail =
  | { "@type": "type.googleapis.com/google.rpc.BadRequest"; fieldViolations: { field: string; description: string }[] }
  | { "@type": "type.googleapis.com/google.rpc.RetryInfo"; retryDelay: string };

export interface GoogleErrorBody {
  error: { code: number; message: string; status: GoogleStatus; details?: ErrorDetail[] };
}

/** The HTTP status Google would answer (Frontier's 529 is its 503). */
export function googleHttpStatus(error: ApiError): number {
  return error.type === "overloaded_error" ? 503 : error.status;
}

function googleStatus(error: ApiError): GoogleStatus {
  switch (error.type) {
    case "authentication_error":
      return "UNAUTHENTICATED";
    case "permission_error":
      return "PERMISSION_DENIED";
    case "not_found_error":
      return "NOT_FOUND";
    case "rate_limit_error":
      return "RESOURCE_EXHAUSTED";
    case "overloaded_error":
      return "UNAVAILABLE";
    case "api_error":
      return error.status === 504 ? "DEADLINE_EXCEEDED" : "INTERNAL";
    case "request_too_large":
      return "INVALID_ARGUMENT";
    case "invalid_request_error":
      // 409: a second request on a busy session (google.rpc ABORTED is its concurrency conflict).
      return error.status === 409 ? "ABORTED" : "INVALID_ARGUMENT";
  }
}

export function googleErrorBody(error: ApiError): GoogleErrorBody {
  const details: ErrorDetail[] = [];
  const field = error.options.param;
  if (field !== undefined && googleHttpStatus(error) === 400) {
    const description = error.message.startsWith(`${field}: `) ? error.message.slice(field.length + 2) : error.message;
    details.push({ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field, description }] });
  }
  if (error.options.retryAfter !== undefined) {
    details.push({ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: `${error.options.retryAfter}s` });
  }
  return {
    error: {
      code: googleHttpStatus(error),
      message: error.message,
      status: googleStatus(error),
      ...(details.length > 0 ? { details } : {}),
    },
  };
}

export function googleErrorResponse(error: ApiError, requestId: string): Response {
  return new Response(JSON.stringify(googleErrorBody(error)), {
    status: googleHttpStatus(error),
    headers: { "content-type": "application/json; charset=UTF-8", "request-id": requestId, ...error.headers() },
  });
}
