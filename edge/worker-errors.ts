/** Worker failures (error events and RPC errors) → Anthropic API errors, decided by code only. */
import { Code, ConnectError } from "@connectrpc/connect";
import { type WorkerError, WorkerErrorCode } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { ApiError } from "./anthropic/errors.ts";
import { checkNever } from "./anthropic/events.ts";

export function workerErrorToApiError(error: WorkerError): ApiError {
  const message = error.param ? `${error.param}: ${error.message}` : error.message;
  switch (error.code) {
    case WorkerErrorCode.UNKNOWN_TOOL_USE_ID:
      return ApiError.invalid(
        `${message}. This tool_use id has no live or saved state on the server; send the full conversation history, ` +
          "including the assistant message that made this tool call, to continue.",
      );
    case WorkerErrorCode.INVALID_REQUEST:
    case WorkerErrorCode.CONTEXT_TOO_LONG:
      return ApiError.invalid(message);
    case WorkerErrorCode.OVERLOADED:
      return ApiError.overloaded(message || "Overloaded");
    case WorkerErrorCode.SESSION_BUSY:
      return ApiError.busy(message || "Another request on this conversation is still running; retry when it finishes");
    case WorkerErrorCode.UNSPECIFIED:
    case WorkerErrorCode.INTERNAL:
      return ApiError.internal(message || "Internal error in the GPU worker");
    default:
      return checkNever(error.code, "worker error code");
  }
}

/** An error thrown by a worker RPC (transport failure, non-OK gRPC status). */
export function rpcErrorToApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const connect = ConnectError.from(error);
  switch (connect.code) {
    case Code.Unavailable:
    case Code.ResourceExhausted:
    case Code.DeadlineExceeded:
    case Code.Aborted:
      return ApiError.overloaded("The GPU worker is unavailable or overloaded; retry shortly");
    case Code.InvalidArgument:
    case Code.FailedPrecondition:
    case Code.OutOfRange:
      return ApiError.invalid(connect.rawMessage);
    default:
      return ApiError.internal("The GPU worker failed to process the request");
  }
}

/** True when the error is the cancellation we caused (client went away). */
export function isCancellation(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (error instanceof ConnectError && error.code === Code.Canceled);
}
