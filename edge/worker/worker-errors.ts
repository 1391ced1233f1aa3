/** Worker failures (error events and RPC errors) → Anthropic API errors, decided by code only. */
import { Code, ConnectError } from "@connectrpc/connect";
import { type WorkerError, WorkerErrorCode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { checkNever } from "../../shared/check-never.ts";
import { ApiError, type ApiErrorOptions } from "../core/errors.ts";
import { type DeadlineKind, missedDeadline } from "./stream-deadlines.ts";
import { TRANSPORT_LOST } from "./worker-client.ts";

/** Structured codes on the ApiErrors that mean "this worker cannot serve the session: move it". */
export const FAILOVER_CODES = { unreachable: "worker_unavailable", draining: "worker_draining" } as const;

/** Why a turn moved before its response started: its worker failed, or refused a new session (`overloaded`). */
export type FailoverReason = keyof typeof FAILOVER_CODES | "overloaded";

/** A worker refused the turn with OVERLOADED (its queue is full): a new session may try another worker once. */
export class WorkerOverloadedError extends ApiError {
  constructor(message: string) {
    super("overloaded_error", message, { retryAfter: 2 });
  }
}

/** The structured code of "the worker has served a newer epoch of this session" (a stale route). */
export const STALE_EPOCH_CODE = "stale_epoch";

/** True when the worker refused the call's epoch as older than one it served: the route was stale. */
export function isStaleEpoch(error: unknown): boolean {
  return error instanceof ApiError && error.options.code === STALE_EPOCH_CODE;
}

/** The structured code of "the worker died while running this request" (never failed over). */
export const WORKER_LOST_CODE = "worker_lost";

/** The structured code of "the worker stopped answering while it held this request" (a missed deadline; never failed over). */
export const WORKER_STALLED_CODE = "worker_stalled";

/**
 * True when the worker's connection dropped mid-request, or the worker went silent past a deadline
 * while it held the request: mark it down, answer the client, never run the request elsewhere.
 */
export function isWorkerLost(error: unknown): boolean {
  return (
    error instanceof ApiError && (error.options.code === WORKER_LOST_CODE || error.options.code === WORKER_STALLED_CODE)
  );
}

/** A call the edge cut because the worker missed one of the stream's deadlines (stream-deadlines.ts). */
export class WorkerDeadlineError extends ApiError {
  constructor(
    readonly deadline: DeadlineKind,
    type: "api_error" | "overloaded_error",
    message: string,
    options: ApiErrorOptions,
  ) {
    super(type, message, options);
  }
}

/** Why a failed call says its worker is gone (mark it down now, not at its heartbeat timeout); else undefined. */
export type WorkerDownReason = "unreachable" | "lost" | "deadline";

export function workerDownReason(error: unknown): WorkerDownReason | undefined {
  if (error instanceof WorkerDeadlineError) return "deadline";
  if (isWorkerLost(error)) return "lost";
  if (failoverReason(error) === "unreachable") return "unreachable";
  return undefined;
}

/** Why the session should move, when the error says its worker cannot serve it; else undefined. */
export function failoverReason(error: unknown): keyof typeof FAILOVER_CODES | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.options.code === FAILOVER_CODES.unreachable) return "unreachable";
  if (error.options.code === FAILOVER_CODES.draining) return "draining";
  return undefined;
}

export function workerErrorToApiError(error: WorkerError): ApiError {
  const named = error.param === "" || error.message.startsWith(error.param);
  const message = named ? error.message : `${error.param}: ${error.message}`;
  switch (error.code) {
    case WorkerErrorCode.UNKNOWN_TOOL_USE_ID:
      return ApiError.invalid(
        `${message}. This tool_use id has no live or saved state on the server; send the full conversation history, ` +
          "including the assistant message that made this tool call, to continue.",
      );
    case WorkerErrorCode.INVALID_REQUEST:
      return error.param === ""
        ? ApiError.invalid(message)
        : new ApiError("invalid_request_error", message, { param: error.param });
    case WorkerErrorCode.CONTEXT_TOO_LONG:
      return ApiError.invalid(message);
    case WorkerErrorCode.OVERLOADED:
      return new WorkerOverloadedError(message || "Overloaded");
    case WorkerErrorCode.DRAINING:
      return new ApiError("overloaded_error", "The GPU worker is draining; retry", {
        retryAfter: 1,
        code: FAILOVER_CODES.draining,
      });
    case WorkerErrorCode.STALE_EPOCH:
      return new ApiError(
        "invalid_request_error",
        "This conversation moved to another GPU worker while the request was in flight; retry",
        { status: 409, retryAfter: 1, code: STALE_EPOCH_CODE },
      );
    case WorkerErrorCode.SESSION_BUSY:
      return ApiError.busy(message || "Another request on this conversation is still running; retry when it finishes");
    case WorkerErrorCode.TURN_TIME_LIMIT:
      // Not retried: the same turn would run into the same limit.
      return new ApiError("api_error", message || "The turn reached the server's time limit", { shouldRetry: false });
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
      if (connect.metadata.get(TRANSPORT_LOST.header) === TRANSPORT_LOST.value) {
        return new ApiError(
          "api_error",
          "The GPU worker stopped while running this request; it was not retried, since the request itself may have caused it",
          { code: WORKER_LOST_CODE, shouldRetry: false },
        );
      }
      return new ApiError("overloaded_error", "The GPU worker is unavailable; retry shortly", {
        retryAfter: 1,
        code: FAILOVER_CODES.unreachable,
      });
    case Code.DeadlineExceeded:
      return (
        deadlineError(connect) ?? ApiError.overloaded("The GPU worker is unavailable or overloaded; retry shortly")
      );
    case Code.ResourceExhausted:
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

/**
 * A missed stream deadline: `connect` (the worker never took the request) fails over like an
 * unreachable worker; `first_event` and `idle` (it went silent holding the request) like a lost one.
 */
function deadlineError(error: ConnectError): WorkerDeadlineError | undefined {
  const deadline = missedDeadline(error);
  if (deadline === undefined) return undefined;
  if (deadline === "connect") {
    return new WorkerDeadlineError(deadline, "overloaded_error", "The GPU worker did not answer; retry shortly", {
      retryAfter: 1,
      code: FAILOVER_CODES.unreachable,
    });
  }
  return new WorkerDeadlineError(
    deadline,
    "api_error",
    `The GPU worker stopped responding while running this request (${error.rawMessage}); it was not retried, since the request itself may have caused it`,
    { code: WORKER_STALLED_CODE, shouldRetry: false },
  );
}
