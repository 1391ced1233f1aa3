/**
 * TenantAuthorityDO's soft state (edge/core/write-behind.ts), as the limiter it replaced kept it:
 * admissions are decided in memory at once, SQLite gets the reservations and buckets with the write
 * (flushed here instead of waited for), an instance started over the same storage (a restart) still
 * counts the requests in flight and starts from the written buckets, and a settled request leaves no
 * reservation behind. The ledger is written before settle answers.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AdmitRequest } from "../../edge/tenancy/authority/authority-api.ts";
import { TenantAuthorityDO } from "../../edge/tenancy/authority/tenant-authority-do.ts";

const ENV_LIMITS = { concurrent: 0, perMinute: 0 };

function authority() {
  const stub = env.TENANTS.getByName(`tenant-${crypto.randomUUID()}`);
  const flushAndRead = () =>
    runInDurableObject(stub, (instance: TenantAuthorityDO, state) => {
      instance.softState.flush();
      const sql = state.storage.sql;
      return {
        reservations: sql
          .exec<{ request_id: string }>("SELECT request_id FROM soft_reservations ORDER BY request_id")
          .toArray()
          .map((r) => r.request_id),
        buckets: sql.exec<{ scope: string; kind: string }>("SELECT scope, kind FROM soft_buckets").toArray(),
      };
    });
  const stored = () =>
    runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ request_id: string }>("SELECT request_id FROM soft_reservations ORDER BY request_id")
        .toArray()
        .map((r) => r.request_id),
    );
  return { stub, flushAndRead, stored };
}

const admit = (requestId: string): AdmitRequest => ({
  requestId,
  keyId: "0123456789abcdef",
  credential: { kind: "env" },
  env: ENV_LIMITS,
  model: "m",
  inputTokens: 10,
  outputTokens: 10,
});

describe("TenantAuthorityDO soft state", () => {
  it("decides in memory, writes reservations that outlive the delay, and keeps them across a restart", async () => {
    const { stub, flushAndRead, stored } = authority();
    await stub.configure({
      limits: { requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: 1 },
      budget: null,
      models: null,
    });
    expect(await stub.admit(admit("r1"))).toMatchObject({ ok: true });
    expect(await stub.admit(admit("r2"))).toMatchObject({
      ok: false,
      refusal: { kind: "limit", reason: "concurrency" },
    });
    expect((await flushAndRead()).reservations).toEqual(["r1"]);
    const restarted = await runInDurableObject(stub, (_instance, state) =>
      new TenantAuthorityDO(state, env).admit(admit("r3")),
    );
    expect(restarted).toMatchObject({ ok: false, refusal: { reason: "concurrency" } });
    // Settled: the slot is free at once; the row goes with the next write.
    expect(await stub.settle({ requestId: "r1", keyId: "0123456789abcdef" })).toEqual({ counted: false });
    expect(await stub.admit(admit("r4"))).toMatchObject({ ok: true });
    await stub.settle({ requestId: "r4", keyId: "0123456789abcdef" });
    expect((await flushAndRead()).reservations).toEqual([]);
    expect(await stored()).toEqual([]);
  });

  it("leaves no settled request's reservation, writes its buckets behind and its ledger at once", async () => {
    const { stub, flushAndRead } = authority();
    await stub.configure({
      limits: { requestsPerMinute: 3, tokensPerMinute: 1000, concurrentRequests: null },
      budget: null,
      models: null,
    });
    for (const id of ["a", "b", "c"]) {
      expect(await stub.admit(admit(id))).toMatchObject({ ok: true });
      const usage = { model: "m", prefilled: 5, cached: 0, output: 5, partial: false };
      expect(await stub.settle({ requestId: id, keyId: "0123456789abcdef", usage })).toEqual({ counted: true });
    }
    expect(await stub.admit(admit("d"))).toMatchObject({ ok: false, refusal: { reason: "requests" } });
    // The ledger is durable before settle answers.
    const turns = await runInDurableObject(
      stub,
      (_instance, state) => state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM usage_turns").one().n,
    );
    expect(turns).toBe(3);
    const written = await flushAndRead();
    expect(written.reservations).toEqual([]);
    expect(written.buckets.map((b) => b.kind).sort()).toEqual(["requests", "tokens"]);
    // The written buckets are what a restarted instance starts from.
    const restarted = await runInDurableObject(stub, (_instance, state) =>
      new TenantAuthorityDO(state, env).admit(admit("e")),
    );
    expect(restarted).toMatchObject({ ok: false, refusal: { reason: "requests" } });
  });
});
