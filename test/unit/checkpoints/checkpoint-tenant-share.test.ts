/**
 * Per-tenant shares of the checkpoint budget (issue 30 item 5): once the store is over budget, a
 * tenant above its share loses its own least valuable checkpoints first, so tenant A filling the
 * disk never evicts tenant B's (within its share); a tenant alone may still use the whole budget;
 * the evictions are counted by reason in the worker's metrics.
 */
import { existsSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { CheckpointMeta } from "../../../gpu-worker/checkpoints/store/types.ts";
import { WorkerMetrics } from "../../../gpu-worker/metrics/worker-metrics.ts";
import { StoreFixture } from "./fixture.ts";

const STATE_BYTES = 4096;
let fx: StoreFixture | undefined;
afterEach(() => fx?.dispose());

/** A store whose budget holds about 10 checkpoints, a tenant's share about 5. */
async function sizedFixture(): Promise<{ fx: StoreFixture; one: number }> {
  const probe = new StoreFixture();
  const one = (await probe.write({ text: "probe", stateBytes: STATE_BYTES })).bytes;
  probe.dispose();
  return { fx: new StoreFixture({ budgetBytes: one * 10 + one / 2, tenantShareBytes: one * 5 + one / 2 }), one };
}

const kept = (meta: CheckpointMeta) => existsSync(fx?.statePath(meta.id) ?? "");

async function evictionsMetric(reason: string): Promise<number> {
  const store = fx?.store;
  const metrics = new WorkerMetrics({ modelName: "m", contextSize: 4096 }, () => ({
    running: 0,
    waiting: 0,
    residentSessions: 0,
    parkedSessions: 0,
    kvTokens: 0,
    kvCapacity: 1,
    checkpoints: store?.stats(),
  }));
  const { body } = await metrics.scrape();
  const line = body.split("\n").find((l) => l.startsWith(`frontier:checkpoint_evictions_total{reason="${reason}"`));
  return Number(line?.split(" ").at(-1) ?? Number.NaN);
}

describe("per-tenant checkpoint share", () => {
  it("tenant A filling the store evicts A's own checkpoints; B's survive", async () => {
    const sized = await sizedFixture();
    fx = sized.fx;
    const b: CheckpointMeta[] = [];
    for (let i = 0; i < 3; i++) b.push(await fx.write({ tenant: "tenant-b", text: `b${i}`, stateBytes: STATE_BYTES }));
    const a: CheckpointMeta[] = [];
    for (let i = 0; i < 12; i++) a.push(await fx.write({ tenant: "tenant-a", text: `a${i}`, stateBytes: STATE_BYTES }));

    // B's checkpoints are the oldest and least recently used, and still all there.
    expect(b.map(kept)).toEqual([true, true, true]);
    // A's newest are kept, its oldest went first; the store is within its budget.
    expect(kept(a[11] as CheckpointMeta)).toBe(true);
    expect(kept(a[0] as CheckpointMeta)).toBe(false);
    expect(fx.store.stats().bytes).toBeLessThanOrEqual(fx.options.budgetBytes ?? 0);
    const aKept = a.filter(kept).length;
    expect(aKept).toBeGreaterThanOrEqual(5);
    expect(aKept).toBeLessThanOrEqual(7);
    expect(fx.store.stats().evictions).toMatchObject({ "tenant-share": 12 - aKept, budget: 0 });
    expect(await evictionsMetric("tenant-share")).toBe(12 - aKept);
    expect(await evictionsMetric("budget")).toBe(0);
  });

  it("remembers whose session checkpoint was evicted and why, until the session writes again", async () => {
    const sized = await sizedFixture();
    fx = sized.fx;
    await fx.write({ tenant: "tenant-b", sessionId: "s-b", reason: "parked", text: "b", stateBytes: STATE_BYTES });
    const first = await fx.write({
      tenant: "tenant-a",
      sessionId: "s-a",
      reason: "parked",
      text: "a-parked",
      stateBytes: STATE_BYTES,
    });
    for (let i = 0; i < 12; i++) {
      await fx.write({
        tenant: "tenant-a",
        sessionId: `s-a${i}`,
        reason: "parked",
        text: `a${i}`,
        stateBytes: STATE_BYTES,
      });
    }
    expect(kept(first)).toBe(false);
    expect(fx.store.evictedSession("tenant-a", "s-a")).toBe("tenant-share");
    expect(fx.store.evictedSession("tenant-b", "s-b")).toBeUndefined();
    // Another tenant naming the same session id learns nothing.
    expect(fx.store.evictedSession("tenant-b", "s-a")).toBeUndefined();
    await fx.write({ tenant: "tenant-a", sessionId: "s-a", reason: "parked", text: "again", stateBytes: STATE_BYTES });
    expect(fx.store.evictedSession("tenant-a", "s-a")).toBeUndefined();
  });

  it("a tenant alone may use the whole budget: the share applies only when the store is over it", async () => {
    const sized = await sizedFixture();
    fx = sized.fx;
    const a: CheckpointMeta[] = [];
    for (let i = 0; i < 9; i++) a.push(await fx.write({ tenant: "tenant-a", text: `a${i}`, stateBytes: STATE_BYTES }));
    expect(a.every(kept)).toBe(true);
    expect(fx.store.stats().evictions).toMatchObject({ "tenant-share": 0, budget: 0 });
  });

  it("B's most valuable checkpoints outlast A's writes too, and A's tool frontier outlasts A's periodic ones", async () => {
    const sized = await sizedFixture();
    fx = sized.fx;
    const frontier = await fx.write({
      tenant: "tenant-a",
      sessionId: "s-a",
      reason: "tool-frontier",
      text: "frontier",
      stateBytes: STATE_BYTES,
    });
    const b = await fx.write({ tenant: "tenant-b", text: "b", stateBytes: STATE_BYTES });
    for (let i = 0; i < 15; i++) await fx.write({ tenant: "tenant-a", text: `a${i}`, stateBytes: STATE_BYTES });
    expect(kept(b)).toBe(true);
    expect(kept(frontier)).toBe(true);
  });
});
