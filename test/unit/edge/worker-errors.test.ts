/**
 * Worker failures by structured code (edge/worker/worker-errors.ts): a missed stream deadline is
 * either a worker that never took the request (connect: fail over, like an unreachable one) or one
 * that went silent holding it (first_event, idle: marked down, never run elsewhere, a 500 that says
 * not to retry); an OVERLOADED refusal is the one a new session may take to another worker.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { deadlineMissed } from "../../../edge/worker/stream-deadlines.ts";
import { connectionLost, workerUnreachable } from "../../../edge/worker/worker-client.ts";
import {
  failoverReason,
  isWorkerLost,
  rpcErrorToApiError,
  WorkerDeadlineError,
  WorkerOverloadedError,
  workerDownReason,
  workerErrorToApiError,
} from "../../../edge/worker/worker-errors.ts";
import { WorkerErrorCode, WorkerErrorSchema } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

describe("worker failures", () => {
  it("a connect deadline fails over like an unreachable worker, and marks it down", () => {
    const error = rpcErrorToApiError(deadlineMissed("connect", 5000));
    expect(error).toBeInstanceOf(WorkerDeadlineError);
    expect([error.status, error.type, failoverReason(error), isWorkerLost(error)]).toEqual([
      529,
      "overloaded_error",
      "unreachable",
      false,
    ]);
    expect(workerDownReason(error)).toBe("deadline");
    expect((error as WorkerDeadlineError).deadline).toBe("connect");
  });

  it("a first-event or idle deadline is a worker lost mid-request: 500, not retried, marked down", () => {
    for (const kind of ["first_event", "idle"] as const) {
      const error = rpcErrorToApiError(deadlineMissed(kind, 15000));
      expect([error.status, error.type, error.shouldRetry, isWorkerLost(error), failoverReason(error)]).toEqual([
        500,
        "api_error",
        false,
        true,
        undefined,
      ]);
      expect(error.message).toMatch(/stopped responding.*15000 ms.*not retried/);
      expect([workerDownReason(error), (error as WorkerDeadlineError).deadline]).toEqual(["deadline", kind]);
    }
  });

  it("says which failures put a worker down, and which do not", () => {
    expect(workerDownReason(rpcErrorToApiError(workerUnreachable(new Error("refused"))))).toBe("unreachable");
    expect(workerDownReason(rpcErrorToApiError(connectionLost(new Error("reset"))))).toBe("lost");
    expect(workerDownReason(rpcErrorToApiError(new ConnectError("cancelled", Code.Canceled)))).toBeUndefined();
    expect(workerDownReason(rpcErrorToApiError(new ConnectError("slow", Code.DeadlineExceeded)))).toBeUndefined();
    const overloaded = workerErrorToApiError(
      create(WorkerErrorSchema, { code: WorkerErrorCode.OVERLOADED, message: "queue full" }),
    );
    expect(overloaded).toBeInstanceOf(WorkerOverloadedError);
    expect([overloaded.status, overloaded.options.code, workerDownReason(overloaded)]).toEqual([
      529,
      undefined,
      undefined,
    ]);
  });
});
