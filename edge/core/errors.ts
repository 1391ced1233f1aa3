/**
 * The edge's error taxonomy, protocol-neutral: one class, the status chosen from a table by error
 * type, the retry decision carried as structured flags (`retry-after`, `x-should-retry`), never
 * parsed from text. Each protocol renders an ApiError in its own shape (edge/protocols/messages/errors.ts,
 * edge/protocols/openai/errors.ts); the router picks the shape by path.
 */
import { ValidationError } from "./check.ts";
import { ConfigError } from "./config-values.ts";
import { log } from "./log.ts";

/** The error types (Anthropic's names; the OpenAI shape maps the few that differ). */
export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "request_too_large"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

const DEFAULT_STATUS: Record<ErrorType, number> = {
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

export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;
  readonly shouldRetry: boolean;

  constructor(
    readonly type: ErrorType,
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

  /** Headers besides content-type and the request id. */
  headers(): Record<string, string> {
    const out: Record<string, string> = { "x-should-retry": String(this.shouldRetry), ...this.options.headers };
    if (this.options.retryAfter !== undefined) out["retry-after"] = String(this.options.retryAfter);
    return out;
  }
}

/**
 * Anything thrown, as an ApiError: validation failures become 400s naming the field; anything
 * unexpected becomes a generic 500 and is logged here, with the request id (the client never sees
 * the detail).
 */
export function toApiError(error: unknown, context: { requestId: string; path?: string }): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof ValidationError) {
    return new ApiError("invalid_request_error", error.message, { param: error.path.join(".") || undefined });
  }
  if (error instanceof ConfigError) {
    log("edge misconfigured", { request: context.requestId, path: context.path, error: error.message });
    return ApiError.internal("The server is misconfigured");
  }
  log("edge error", {
    request: context.requestId,
    path: context.path,
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  return ApiError.internal();
}
