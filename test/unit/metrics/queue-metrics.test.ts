/**
 * The worker's queue metrics, scraped from a real WorkerMetrics registry fed by a real session table
 * (over the engine double): waiters, the oldest wait, free sequences, waiters that left because
 * their call was cancelled, and turns refused past the queue's bound. Existing names are unchanged.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { workerGauges } from "../../../gpu-worker/metrics/gauges.ts";
import { WorkerMetrics } from "../../../gpu-worker/metrics/worker-metrics.ts";
import { SessionTable } from "../../../gpu-worker/session/session-table.ts";
import { parsePromText, sampleSum } from "../../support/prom-text.ts";
import { CheckpointsDouble, drain, EngineDouble } from "../../support/scheduler-doubles.ts";

afterEach(() => {
  vi.useRealTimers();
});

describe("queue metrics", () => {
  it("count waiters, their oldest wait, free sequences, cancelled waiters and refusals", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const engine = new EngineDouble(2);
    const table = new SessionTable(engine, new CheckpointsDouble().asCheckpoints, {
      maxQueue: 2,
      checkpointDelayMs: 0,
    });
    const metrics = new WorkerMetrics({ modelName: "double", contextSize: 4096 }, () =>
      workerGauges({ engine, sessions: table, checkpoints: undefined }),
    );
    const read = async () => parsePromText((await metrics.scrape()).body);

    const idle = await read();
    expect(sampleSum(idle, "frontier:sequences_free")).toBe(2);
    expect(sampleSum(idle, "frontier:num_requests_waiting")).toBe(0);
    expect(sampleSum(idle, "frontier:request_queue_oldest_wait_seconds")).toBe(0);

    const running = [await table.lease("t", "a"), await table.lease("t", "b")];
    const cancel = new AbortController();
    const gone = table.lease("t", "c", undefined, cancel.signal).catch(() => "cancelled");
    const waiting = table.lease("t", "d");
    await drain();
    await expect(table.lease("t", "e")).rejects.toMatchObject({ name: "WorkerFailure" });
    vi.advanceTimersByTime(3_000);
    const busy = await read();
    expect(sampleSum(busy, "frontier:sequences_free")).toBe(0);
    expect(sampleSum(busy, "frontier:num_requests_waiting")).toBe(2);
    expect(sampleSum(busy, "frontier:num_requests_running")).toBe(4);
    expect(sampleSum(busy, "frontier:request_queue_oldest_wait_seconds")).toBe(3);
    expect(sampleSum(busy, "frontier:request_queue_refused_total", { bound: "total" })).toBe(1);

    cancel.abort(new Error("client went away"));
    expect(await gone).toBe("cancelled");
    const after = await read();
    expect(sampleSum(after, "frontier:num_requests_waiting")).toBe(1);
    expect(sampleSum(after, "frontier:request_queue_aborted_total")).toBe(1);

    for (const s of running) table.release(s);
    table.release(await waiting);
  });
});
