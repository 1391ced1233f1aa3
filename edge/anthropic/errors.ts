/**
 * Anthropic's error taxonomy: one class, the status chosen from a table by error type, the retry
 * decision carried as structured flags (`retry-after`, `x-should-retry`), never parsed from text.
 */

export type AnthropicErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

const DEFAULT_STATUS: Record<AnthropicErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export interface ApiErrorOptions {
  /** HTTP status; defaults from the error type (405 and 409 use invalid_request_error). */
  status?: number;
  /** Seconds, sent as `retry-after`. */
  retryAfter?: number;
  /** Sent as `x-should-retry`; defaults to true for 409, 429 and 529. */
  shouldRetry?: boolean;
  headers?: Record<string, string>;
  /** The request field the error is about (rendered by the OpenAI error shape). */
  param?: string;
  /** A machine-readable code (rendered by the OpenAI error shape), e.g. "previous_response_not_found". */
  code?: string;
}

export interface AnthropicErrorBody {
  type: "error";
  error: { type: AnthropicErrorType; message: string };
  request_id: string;
}

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly shouldRetry: boolean;

  constructor(
    readonly type: AnthropicErrorType,
    message: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(message);
    this.status = options.status ?? DEFAULT_STATUS[type];
    this.shouldRetry = options.shouldRetry ?? [409, 429, 529].includes(this.status);
  }

  static invalid(message: string): ApiError {
    return new ApiError("invalid_request_error", message);
  }
  static notFound(message: string): ApiError {
    return new ApiError("not_found_error", message);
  }
  static methodNotAllowed(allow: string): ApiError {
    return new ApiError("invalid_request_error", `Method not allowed; use ${allow}`, {
      status: 405,
      headers: { allow },
    });
  }
  static tooLarge(limit: number): ApiError {
    return new ApiError("request_too_large", `Request exceeds the maximum allowed size of ${limit} bytes`);
  }
  static busy(message: string): ApiError {
    return new ApiError("invalid_request_error", message, { status: 409, retryAfter: 1 });
  }
  static overloaded(message: string, retryAfter = 2): ApiError {
    return new ApiError("overloaded_error", message, { retryAfter });
  }
  static internal(message = "Internal server error"): ApiError {
    return new ApiError("api_error", message);
  }

  body(requestId: string): AnthropicErrorBody {
    return { type: "error", error: { type: this.type, message: this.message }, request_id: requestId };
  }

  /** Headers besides content-type and request-id. */
  headers(): Record<string, string> {
    const out: Record<string, string> = { "x-should-retry": String(this.shouldRetry), ...this.options.headers };
    if (this.options.retryAfter !== undefined) out["retry-after"] = String(this.options.retryAfter);
    return out;
  }
}

/** Wrap anything thrown into an ApiError (unknown errors become a generic 500; details go to the log). */
export function toApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : ApiError.internal();
}

export function errorResponse(error: ApiError, requestId: string): Response {
  return new Response(JSON.stringify(error.body(requestId)), {
    status: error.status,
    headers: { "content-type": "application/json", "request-id": requestId, ...error.headers() },
  });
}
