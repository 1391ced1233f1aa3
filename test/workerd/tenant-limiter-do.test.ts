/**
 * TenantLimiterDO's state is soft (edge/core/write-behind.ts): admissions are decided in memory at once,
 * SQLite gets what outlives the write delay, and an instance started over the same storage (a
 * restart) still counts the requests in flight.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SOFT_STATE_WRITE_MS } from "../../edge/core/write-behind.ts";
import { TenantLimiterDO } from "../../edge/tenancy/tenant-limiter-do.ts";

const writeDelay = () => new Promise((r) => setTimeout(r, SOFT_STATE_WRITE_MS + 100));

function limiter() {
  const stub = env.TENANTS.getByName(`tenant-${crypto.randomUUID()}`);
  const stored = () =>
    runInDurableObject(stub, (_instance, state) => ({
      leases: state.storage.sql
        .exec<{ request_id: string }>("SELECT request_id FROM leases ORDER BY request_id")
        .toArray()
        .map((r) => r.request_id),
      tokens: state.storage.sql.exec<{ tokens: number }>("SELECT tokens FROM bucket").toArray()[0]?.tokens,
    }));
  return { stub, stored };
}

describe("TenantLimiterDO", () => {
  it("counts requests in flight in memory, writes those that outlive the delay, and keeps them across a restart", async () => {
    const { stub, stored } = limiter();
    const solo = { concurrent: 1, perMinute: 0 };
    expect(await stub.acquire("r1", solo)).toEqual({ ok: true });
    expect(await stub.acquire("r2", solo)).toEqual({ ok: false, reason: "concurrency", retryAfterS: 1 });
    expect((await stored()).leases).toEqual([]);
    await writeDelay();
    expect((await stored()).leases).toEqual(["r1"]);
    const restarted = await runInDurableObject(stub, (_instance, state) =>
      new TenantLimiterDO(state, env).acquire("r3", solo),
    );
    expect(restarted).toMatchObject({ ok: false, reason: "concurrency" });
    // Released: the slot is free at once; the row goes after the delay.
    await stub.release("r1");
    expect(await stub.acquire("r4", solo)).toEqual({ ok: true });
    await stub.release("r4");
    expect((await stored()).leases).toEqual(["r1"]);
    await writeDelay();
    expect((await stored()).leases).toEqual([]);
  });

  it("never writes a short request's lease, and writes the rate bucket once per delay", async () => {
    const { stub, stored } = limiter();
    const rate = { concurrent: 0, perMinute: 3 };
    for (const id of ["a", "b", "c"]) {
      expect(await stub.acquire(id, rate)).toEqual({ ok: true });
      await stub.release(id);
    }
    expect(await stub.acquire("d", rate)).toMatchObject({ ok: false, reason: "rate" });
    expect(await stored()).toEqual({ leases: [], tokens: undefined });
    await writeDelay();
    const after = await stored();
    expect(after.leases).toEqual([]);
    expect(after.tokens).toBeLessThan(0.1);
    // The written bucket is what a restarted instance starts from.
    const restarted = await runInDurableObject(stub, (_instance, state) =>
      new TenantLimiterDO(state, env).acquire("e", rate),
    );
    expect(restarted).toMatchObject({ ok: false, reason: "rate" });
  });
});
