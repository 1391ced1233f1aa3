/** The phase clock: checkpoint I/O inside a traced step is attributed to it, phases add up. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../gpu-worker/config.ts";
import { currentTrace, TurnTrace } from "../../../gpu-worker/metrics/turn-trace.ts";

describe("TurnTrace", () => {
  it("splits the lease into queue wait, restore and parking writes, and times each phase", async () => {
    let now = 0;
    const gaps: number[] = [];
    const trace = new TurnTrace({ now: () => now, onInterToken: (s) => gaps.push(s) });
    await trace.during("lease", async () => {
      now += 30; // waiting for a sequence
      const ctx = currentTrace();
      ctx?.trace.addCheckpointIo(ctx.step, "write", 20); // parking another session
      ctx?.trace.addCheckpointIo(ctx.step, "load", 5); // restoring this one
      now += 25;
    });
    now += 4; // planning
    trace.planned();
    await trace.during("anchor", async () => {
      now += 6;
    });
    now += 10;
    trace.prefilled();
    now += 2;
    trace.token();
    now += 8;
    trace.token();
    now += 12;
    trace.token();
    trace.sampled();
    expect(currentTrace()).toBeUndefined();
    expect(trace.phases()).toEqual({
      queueMs: 30,
      restoreMs: 5,
      planMs: 4,
      prefillMs: 10,
      firstTokenMs: 77,
      decodeMs: 20,
      checkpointMs: 26,
      totalMs: 97,
    });
    expect(gaps).toEqual([0.008, 0.012]);
    expect(trace.logFields()).toMatchObject({ queue_ms: 30, restore_ms: 5, first_token_ms: 77, checkpoint_ms: 26 });
  });
});

describe("operations listener configuration", () => {
  it("is off by default and needs a metrics token when a port is set", () => {
    const dev = { FRONTIER_DEV: "1" };
    expect(loadConfig(dev).ops).toBeUndefined();
    expect(() => loadConfig({ ...dev, FRONTIER_METRICS_PORT: "9464" })).toThrow(/FRONTIER_METRICS_TOKEN/);
    expect(() => loadConfig({ ...dev, FRONTIER_METRICS_PORT: "9464", FRONTIER_METRICS_TOKEN: "short" })).toThrow(/16/);
    const ops = loadConfig({
      ...dev,
      FRONTIER_METRICS_PORT: "9464",
      FRONTIER_METRICS_TOKEN: "a-long-enough-metrics-token",
      FRONTIER_WORKER_HOST: "127.0.0.5",
    }).ops;
    expect(ops).toEqual({ host: "127.0.0.5", port: 9464, metricsToken: "a-long-enough-metrics-token" });
  });
});
