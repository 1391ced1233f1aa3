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

  it("lends a tenant room past its share while the queue has it; full, refuses by the bound it is past", () => {
    const q = new TenantFairQueue<Turn>({ total: 3, perTenant: 1 });
    enqueue(q, "a", 2);
    // a is past its share (1), but the queue has room: nobody else needs the place now.
    expect(q.admission("a")).toEqual({ kind: "admit" });
    enqueue(q, "b", 1);
    // Full: a (past its share) is refused by its share; alone on the worker only by the total.
    expect(q.admission("a")).toEqual({ kind: "refuse", bound: "tenant" });
    expect(q.admission("a", false)).toEqual({ kind: "refuse", bound: "total" });
    // b holds its share (1): full, it is refused by it too.
    expect(q.admission("b")).toEqual({ kind: "refuse", bound: "tenant" });
  });

  it("full, a tenant within its share takes the place of the newest waiter of the tenant furthest past its share", () => {
    const q = new TenantFairQueue<Turn>({ total: 6, perTenant: 2 });
    enqueue(q, "a", 2); // at its share
    const bs = enqueue(q, "b", 4); // 2 past its share
    expect(q.admission("c")).toEqual({ kind: "displace", victim: bs[3] });
    // A tenant alone never displaces (the shares do not apply).
    expect(q.admission("c", false)).toEqual({ kind: "refuse", bound: "total" });
    // Nobody past a share: the total refuses.
    const q2 = new TenantFairQueue<Turn>({ total: 4, perTenant: 2 });
    enqueue(q2, "a", 2);
    enqueue(q2, "b", 2);
    expect(q2.admission("c")).toEqual({ kind: "refuse", bound: "total" });
  });

  it("a cancelled turn leaves at once: its place, its tenant's count and the total are freed", () => {
    const q = new TenantFairQueue<Turn>({ total: 3, perTenant: 3 });
    const [a0, a1] = enqueue(q, "a", 2);
    const [b0] = enqueue(q, "b", 1);
    expect(q.admission("c")).toEqual({ kind: "refuse", bound: "total" });
    expect(a1 && q.remove(a1)).toBe(true);
    expect(a1 && q.remove(a1)).toBe(false);
    expect([q.size, q.waiting("a"), q.admission("c")]).toEqual([2, 1, { kind: "admit" }]);
    expect(b0 && q.remove(b0)).toBe(true);
    expect([...q.tenants()].map(([t]) => t)).toEqual(["a"]);
    expect(serve(q, 3)).toEqual([a0?.name]);
    expect(q.size).toBe(0);
  });
});
