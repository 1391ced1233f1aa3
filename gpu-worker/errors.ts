import { WorkerErrorCode } from "../proto/gen/frontier/worker/v1/worker_pb.ts";

/** An error the worker reports to the edge as a `WorkerError` event, by code (never by message text). */
export class WorkerFailure extends Error {
  override readonly name = "WorkerFailure";
  constructor(
    readonly code: WorkerErrorCode,
    message: string,
    readonly param = "",
  ) {
    super(message);
  }

  static invalid(message: string, param = ""): WorkerFailure {
    return new WorkerFailure(WorkerErrorCode.INVALID_REQUEST, message, param);
  }
  static overloaded(message: string): WorkerFailure {
    return new WorkerFailure(WorkerErrorCode.OVERLOADED, message);
  }
  static busy(message: string): WorkerFailure {
    return new WorkerFailure(WorkerErrorCode.SESSION_BUSY, message);
  }
  static unknownToolUseId(message: string, id: string): WorkerFailure {
    return new WorkerFailure(WorkerErrorCode.UNKNOWN_TOOL_USE_ID, message, id);
  }
  static draining(): WorkerFailure {
    return new WorkerFailure(WorkerErrorCode.DRAINING, "this GPU worker is draining and takes no new turns");
  }
  static staleEpoch(epoch: number): WorkerFailure {
    return new WorkerFailure(
      WorkerErrorCode.STALE_EPOCH,
      `epoch ${epoch} is older than one this worker already served for the session; the session has moved`,
      "epoch",
    );
  }
  static contextTooLong(message: string): WorkerFailure {
    return new WorkerFailure(WorkerErrorCode.CONTEXT_TOO_LONG, message, "messages");
  }
}
