/**
 * Issue 42 (256 agents, 4 tenants): the per-tenant share of the worker's queue refused turns while
 * the queue had room (a tenant with 41 waiting of a 160-place queue holding 133: "this tenant's
 * waiting turns fill its share of the queue"). A tenant may now borrow room past its share while the
 * queue has it; when the queue is full and a tenant within its share arrives, the newest waiter of the
 * tenant furthest past its share is refused in its place. Real session table over the engine and
 * checkpoint doubles.
 */
import { describe, expect, it } from "vitest";
import { SessionTable } from "../../../gpu-worker/session/session-table.ts";
import { WorkerErrorCode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CheckpointsDouble, drain, EngineDouble, track } from "../../support/scheduler-doubles.ts";

describe("the queue's tenant shares", () => {
  it("lend room past a share while the queue has it, and take it back for a tenant within its share", async () => {
    const table = new SessionTable(new EngineDouble(1), new CheckpointsDouble().asCheckpoints, {
      maxQueue: 4,
      maxQueuePerTenant: 1,
      checkpointDelayMs: 0,
    });
    await table.lease("b", "running"); // b holds the one sequence; a and b share the worker
    const a = [track(table.lease("a", "a0")), track(table.lease("a", "a1")), track(table.lease("a", "a2"))];
    await drain();
    // a waits 3 turns, past its share of 1: nobody else needed the room, so none was refused.
    expect(a.map((t) => t.state)).toEqual(["waiting", "waiting", "waiting"]);
    const b1 = track(table.lease("b", "b1"));
    await drain();
    expect(table.stats().queued).toBe(4);
    // Full. c (within its share) arrives: a's newest waiter gives its place back.
    const c0 = track(table.lease("c", "c0"));
    await drain();
    expect(c0.state).toBe("waiting");
    expect(a[2]?.state).toBe("failed");
    expect(a[2]?.error).toMatchObject({ code: WorkerErrorCode.OVERLOADED });
    expect([a[0]?.state, a[1]?.state, b1.state]).toEqual(["waiting", "waiting", "waiting"]);
    expect(table.stats().queued).toBe(4);
    expect(table.stats().queue.refused).toEqual({ total: 0, tenant: 1 });
    // Full, and b (at its share) arrives: refused by its share; nobody displaced.
    await expect(table.lease("b", "b2")).rejects.toMatchObject({ code: WorkerErrorCode.OVERLOADED });
    expect(table.stats().queued).toBe(4);
    expect([a[0]?.state, a[1]?.state]).toEqual(["waiting", "waiting"]);
  });
});
