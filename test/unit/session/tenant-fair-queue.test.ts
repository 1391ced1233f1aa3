import { describe, expect, it } from "vitest";
import { TenantFairQueue } from "../../../gpu-worker/session/tenant-fair-queue.ts";

/** Queue `n` waiters for `tenant`, recording their wake order in `woken`. */
function enqueue(q: TenantFairQueue, tenant: string, n: number, woken: string[]): void {
  for (let i = 0; i < n; i++) void q.wait(tenant).then(() => woken.push(`${tenant}${i}`));
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe("TenantFairQueue", () => {
  it("serves tenants round-robin: a burst of one tenant does not go before another's first turn", async () => {
    const q = new TenantFairQueue({ total: 64, perTenant: 32 });
    const woken: string[] = [];
    enqueue(q, "a", 12, woken);
    enqueue(q, "b", 2, woken);
    for (let i = 0; i < 6; i++) q.wakeNext(() => true);
    await flush();
    expect(woken).toEqual(["a0", "b0", "a1", "b1", "a2", "a3"]);
    expect(q.size).toBe(8);
  });

  it("skips a tenant at its running cap and serves the next eligible one", async () => {
    const q = new TenantFairQueue({ total: 8, perTenant: 8 });
    const woken: string[] = [];
    enqueue(q, "a", 3, woken);
    enqueue(q, "b", 1, woken);
    expect(q.wakeNext((t) => t !== "a")).toBe(true);
    expect(q.wakeNext((t) => t !== "a")).toBe(false);
    await flush();
    expect(woken).toEqual(["b0"]);
    expect(q.waiting("a")).toBe(3);
  });

  it("bounds the queue per tenant and in total, naming which bound refused", () => {
    const q = new TenantFairQueue({ total: 3, perTenant: 2 });
    void q.wait("a");
    void q.wait("a");
    expect(q.refusal("a")).toBe("tenant");
    expect(q.refusal("b")).toBeUndefined();
    expect(q.refusal("a", false)).toBeUndefined(); // alone on the worker: only the total bounds it
    void q.wait("b");
    expect(q.refusal("c")).toBe("total");
  });

  it("a woken turn that found no sequence keeps its place at the head of its tenant's queue", async () => {
    const q = new TenantFairQueue({ total: 8, perTenant: 8 });
    const woken: string[] = [];
    enqueue(q, "a", 2, woken);
    q.wakeNext(() => true);
    await flush();
    void q.wait("a", true).then(() => woken.push("a0-again"));
    q.wakeNext(() => true);
    await flush();
    expect(woken).toEqual(["a0", "a0-again"]);
  });
});
