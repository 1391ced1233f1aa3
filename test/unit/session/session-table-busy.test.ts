/**
 * A request for a session another request still holds waits for it instead of failing: the client
 * that aborted a turn and sent it again at once (the aborted turn is still stopping) gets the session
 * as soon as the old turn lets it go. It leaves on its own cancellation, and is refused as busy only
 * past its wait. Real session table over the engine and checkpoint doubles.
 */
import { describe, expect, it } from "vitest";
import { SessionTable } from "../../../gpu-worker/session/session-table.ts";
import { WorkerErrorCode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CheckpointsDouble, drain, EngineDouble, frontierDouble, track } from "../../support/scheduler-doubles.ts";

function setup(busyWaitMs = 60_000) {
  const engine = new EngineDouble(2);
  const checkpoints = new CheckpointsDouble();
  const table = new SessionTable(engine, checkpoints.asCheckpoints, { maxQueue: 8, checkpointDelayMs: 0, busyWaitMs });
  return { table };
}

describe("a request for a session another request holds", () => {
  it("waits for it and gets the same live session once the first lets it go", async () => {
    const { table } = setup();
    const first = await table.lease("t", "s");
    first.frontier = frontierDouble();
    const again = track(table.lease("t", "s"));
    await drain();
    expect(again.state).toBe("waiting");
    table.release(first);
    await drain();
    expect(again.state).toBe("done");
    expect(again.value).toBe(first);
    expect(again.value?.frontier).toBeDefined();
  });

  it("leaves at once when its own call is cancelled, taking nothing", async () => {
    const { table } = setup();
    const first = await table.lease("t", "s");
    const client = new AbortController();
    const again = track(table.lease("t", "s", undefined, client.signal));
    await drain();
    client.abort(new Error("client went away"));
    await drain();
    expect(again.state).toBe("failed");
    expect(again.error).toMatchObject({ message: "client went away" });
    table.release(first);
    const next = await table.lease("t", "s");
    expect(next).toBe(first);
  });

  it("is refused as busy once its wait runs out (the session is still held)", async () => {
    const { table } = setup(20);
    await table.lease("t", "s");
    await expect(table.lease("t", "s")).rejects.toMatchObject({ code: WorkerErrorCode.SESSION_BUSY });
  });

  it("does not hold up other sessions meanwhile", async () => {
    const { table } = setup();
    await table.lease("t", "s");
    const again = track(table.lease("t", "s"));
    const other = await table.lease("t", "other");
    expect(other.sessionId).toBe("other");
    expect(again.state).toBe("waiting");
  });
});
