/**
 * Issue 42, item 2: cancellation reaches the queue. A turn waiting for a sequence takes the call's
 * AbortSignal (the client went away, or the turn's wall clock ran out): it leaves the queue at once,
 * frees its slot and is never started — no park, no restore, no sequence — and the turns behind it
 * move up. Real session table over the engine and checkpoint doubles.
 */
import { describe, expect, it } from "vitest";
import { generateEvent } from "../../../gpu-worker/generate/events.ts";
import { TurnCut } from "../../../gpu-worker/generate/turn-cut.ts";
import { SessionTable } from "../../../gpu-worker/session/session-table.ts";
import { limitTurn } from "../../../gpu-worker/turn/turn-limits.ts";
import { StopReason, WorkerErrorCode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import {
  CheckpointsDouble,
  drain,
  EngineDouble,
  frontierDouble,
  Gate,
  track,
} from "../../support/scheduler-doubles.ts";

function setup(sequences: number, maxQueue = 16) {
  const engine = new EngineDouble(sequences);
  const checkpoints = new CheckpointsDouble();
  const table = new SessionTable(engine, checkpoints.asCheckpoints, { maxQueue, checkpointDelayMs: 0 });
  return { engine, checkpoints, table };
}

describe("a cancelled waiter", () => {
  it("leaves the queue at once, frees its slot, and is never started; the next waiter moves up", async () => {
    const { engine, checkpoints, table } = setup(1, 2);
    const running = await table.lease("t", "r");
    running.frontier = frontierDouble();
    const client = new AbortController();
    const cancelled = track(table.lease("t", "gone", undefined, client.signal));
    const next = track(table.lease("t", "next"));
    await drain();
    expect(table.stats().queued).toBe(2);
    // The queue is full: a third turn (of the one tenant here) is refused.
    await expect(table.lease("t", "third")).rejects.toMatchObject({ code: WorkerErrorCode.OVERLOADED });
    client.abort(new Error("client went away"));
    await drain();
    expect(cancelled.state).toBe("failed");
    expect(cancelled.error).toMatchObject({ message: "client went away" });
    expect(table.stats().queued).toBe(1);
    expect(table.stats().queue.aborted).toBe(1);
    // Its slot is free again.
    const third = track(table.lease("u", "third"));
    await drain();
    expect(third.state).toBe("waiting");
    table.release(running); // "next" parks "r" and runs; the cancelled turn took nothing
    await drain();
    expect(next.state).toBe("done");
    expect(checkpoints.restored).not.toContain("gone");
    expect(table.isResident("t", "gone")).toBe(false);
    expect(engine.stats().sequencesFree).toBe(0);
  });

  it("cancelled while the engine hands its sequence over gives the sequence straight back", async () => {
    const { engine, checkpoints, table } = setup(1);
    engine.acquireGate = new Gate();
    const client = new AbortController();
    const lease = track(table.lease("t", "gone", undefined, client.signal));
    await drain();
    expect(engine.acquiring).toBe(1);
    client.abort(new Error("client went away"));
    engine.acquireGate.resolve();
    await drain();
    expect(lease.state).toBe("failed");
    expect(checkpoints.restored).toEqual([]);
    expect(engine.stats().sequencesFree).toBe(1);
    expect(table.isResident("t", "gone")).toBe(false);
  });

  it("an already cancelled call takes nothing", async () => {
    const { engine, table } = setup(1);
    const client = new AbortController();
    client.abort(new Error("client went away"));
    await expect(table.lease("t", "gone", undefined, client.signal)).rejects.toThrow("client went away");
    expect(engine.stats().sequencesFree).toBe(1);
    expect(table.stats().queued).toBe(0);
  });

  it("a turn whose wall clock runs out while it waits ends with the time-limit error and leaves the queue", async () => {
    const { checkpoints, table } = setup(1);
    const running = await table.lease("t", "r");
    const limitEvent = generateEvent({
      case: "error",
      value: { code: WorkerErrorCode.TURN_TIME_LIMIT, message: "time limit", param: "" },
    });
    const events: string[] = [];
    let leaseError: unknown;
    async function* turn(signal: AbortSignal) {
      try {
        const session = await table.lease("t", "slow", undefined, signal);
        table.release(session);
      } catch (error) {
        leaseError = error;
        throw error;
      }
      yield generateEvent({ case: "stop", value: { reason: StopReason.END_TURN } });
    }
    const limits = { wallClockMs: 30, stallMs: 0, aheadEvents: 256 };
    for await (const e of limitTurn(turn, new AbortController().signal, limits, () => limitEvent, "req-slow")) {
      events.push(e.event.case === "error" ? `error:${e.event.value.code}` : String(e.event.case));
    }
    expect(events).toEqual([`error:${WorkerErrorCode.TURN_TIME_LIMIT}`]);
    expect(leaseError).toBeInstanceOf(TurnCut);
    expect(table.stats().queued).toBe(0);
    expect(table.stats().queue.aborted).toBe(1);
    table.release(running);
    await drain();
    expect(checkpoints.restored).not.toContain("slow");
    expect(table.isResident("t", "slow")).toBe(false);
  });
});
