import { describe, expect, it } from "vitest";
import { TenantFairQueue } from "../../../gpu-worker/session/tenant-fair-queue.ts";

interface Turn {
  tenant: string;
  name: string;
}

/** Queue `n` turns for `tenant`, named `${tenant}${i}`. */
function enqueue(q: TenantFairQueue<Turn>, tenant: string, n: number): Turn[] {
  const turns = Array.from({ length: n }, (_, i) => ({ tenant, name: `${tenant}${i}` }));
  for (const t of turns) q.push(t);
  return turns;
}

/** Serve up to `n` turns in the queue's order. */
function serve(q: TenantFairQueue<Turn>, n: number, eligible: (tenant: string) => boolean = () => true): string[] {
  const served: string[] = [];
  for (let i = 0; i < n; i++) {
    const next = q.takeNext(eligible);
    if (next) served.push(next.name);
  }
  return served;
}

describe("TenantFairQueue", () => {
  it("serves tenants round-robin: a burst of one tenant does not go before another's first turn", () => {
    const q = new TenantFairQueue<Turn>({ total: 64, perTenant: 32 });
    enqueue(q, "a", 12);
    enqueue(q, "b", 2);
    expect(serve(q, 6)).toEqual(["a0", "b0", "a1", "b1", "a2", "a3"]);
    expect(q.size).toBe(8);
  });

  it("skips a tenant at its running cap and serves the next eligible one", () => {
    const q = new TenantFairQueue<Turn>({ total: 8, perTenant: 8 });
    enqueue(q, "a", 3);
    enqueue(q, "b", 1);
    expect(serve(q, 2, (t) => t !== "a")).toEqual(["b0"]);
    expect(q.waiting("a")).toBe(3);
  });

  it("bounds the queue per tenant and in total, naming which bound refused", () => {
    const q = new TenantFairQueue<Turn>({ total: 3, perTenant: 2 });
    enqueue(q, "a", 2);
    expect(q.refusal("a")).toBe("tenant");
    expect(q.refusal("b")).toBeUndefined();
    expect(q.refusal("a", false)).toBeUndefined(); // alone on the worker: only the total bounds it
    enqueue(q, "b", 1);
    expect(q.refusal("c")).toBe("total");
  });

  it("a cancelled turn leaves at once: its place, its tenant's count and the total are freed", () => {
    const q = new TenantFairQueue<Turn>({ total: 3, perTenant: 3 });
    const [a0, a1] = enqueue(q, "a", 2);
    const [b0] = enqueue(q, "b", 1);
    expect(q.refusal("c")).toBe("total");
    expect(a1 && q.remove(a1)).toBe(true);
    expect(a1 && q.remove(a1)).toBe(false);
    expect([q.size, q.waiting("a"), q.refusal("c")]).toEqual([2, 1, undefined]);
    expect(b0 && q.remove(b0)).toBe(true);
    expect([...q.tenants()].map(([t]) => t)).toEqual(["a"]);
    expect(serve(q, 3)).toEqual([a0?.name]);
    expect(q.size).toBe(0);
  });
});
