/**
 * Issue 42, item 1: no waiter sleeps while a sequence it may use is free. Each case drives the real
 * session table over an engine double and checkpoint doubles whose parking writes and restores
 * finish when the test opens their gate, so the interleavings that stalled the worker are replayed
 * exactly, not hoped for.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LeasedSession } from "../../../gpu-worker/session/live-session.ts";
import { SessionTable } from "../../../gpu-worker/session/session-table.ts";
import { CheckpointsDouble, drain, EngineDouble, frontierDouble, Gate } from "../../support/scheduler-doubles.ts";

/** A lease whose outcome the test reads without awaiting it. */
class TrackedLease {
  state: "waiting" | "leased" | "failed" = "waiting";
  session: LeasedSession | undefined;
  error: unknown;
  readonly done: Promise<void>;
  constructor(table: SessionTable, tenant: string, id: string) {
    this.done = table.lease(tenant, id).then(
      (session) => {
        this.state = "leased";
        this.session = session;
      },
      (error: unknown) => {
        this.state = "failed";
        this.error = error;
      },
    );
  }
}

function setup(sequences: number, options: Partial<ConstructorParameters<typeof SessionTable>[2]> = {}) {
  const engine = new EngineDouble(sequences);
  const checkpoints = new CheckpointsDouble();
  const table = new SessionTable(engine, checkpoints.asCheckpoints, { maxQueue: 16, checkpointDelayMs: 0, ...options });
  return { engine, checkpoints, table };
}

/** Lease a session, record a finished turn on it and release it: idle, resident, parkable. */
async function idleSession(table: SessionTable, tenant: string, id: string, tools = false): Promise<void> {
  const session = await table.lease(tenant, id);
  session.frontier = frontierDouble(tools);
  table.release(session);
}

afterEach(() => {
  vi.useRealTimers();
});

describe("every path that frees a sequence wakes a waiter", () => {
  it("a turn that parked a session, then found its tenant's earlier waiter, does not strand the freed sequence", async () => {
    const { engine, checkpoints, table } = setup(1);
    await idleSession(table, "t", "a");
    const parkWrite = new Gate();
    checkpoints.saveTimings.push({ kind: "gate", gate: parkWrite });
    const b = new TrackedLease(table, "t", "b"); // no free sequence: parks "a" (its write held)
    await drain();
    const c = new TrackedLease(table, "t", "c"); // "a" is being parked, nothing to take: c waits
    await drain();
    expect([b.state, c.state]).toEqual(["waiting", "waiting"]);
    parkWrite.resolve(); // "a" is parked and its sequence freed
    await drain();
    const leased = [b, c].filter((l) => l.state === "leased");
    expect(
      { leased: leased.length, free: engine.stats().sequencesFree, queued: table.stats().queued },
      "the freed sequence stays free while both turns wait",
    ).toEqual({ leased: 1, free: 0, queued: 1 });
    // The one that runs ends; the other takes the sequence next.
    const [first] = leased;
    if (first?.session) table.release(first.session);
    await drain();
    expect([b.state, c.state]).toEqual(["leased", "leased"]);
  });

  it("a session superseded by a newer epoch, or dropped, frees its sequence to a waiter at once", async () => {
    for (const free of ["epoch", "drop"] as const) {
      const { checkpoints, table } = setup(2);
      await idleSession(table, "t", "a");
      await idleSession(table, "t", "b");
      table.admitEpoch("t", "b", 1);
      const parkWrite = new Gate();
      checkpoints.saveTimings.push({ kind: "gate", gate: parkWrite });
      const w = new TrackedLease(table, "t", "w"); // parks "a" (the least recently used), its write held
      await drain();
      expect(w.state).toBe("waiting");
      // "b" ran elsewhere (its state here is dropped), or the edge released it.
      if (free === "epoch") table.admitEpoch("t", "b", 2);
      else table.drop("t", "b");
      await drain();
      expect(w.state, `${free}: the freed sequence waits for an unrelated park`).toBe("leased");
      parkWrite.resolve();
      await drain();
    }
  });

  it("a tenant over its cap does not hide another tenant's waiter from the idle session it could park", async () => {
    const { table } = setup(3, { tenantMaxSequences: 1 });
    // Alone, tenant a runs two turns (no cap binds a lone tenant).
    const running = [await table.lease("a", "a1"), await table.lease("a", "a2")];
    const b0 = await table.lease("b", "b0"); // b arrives: the cap binds now, and a is over it
    const a3 = new TrackedLease(table, "a", "a3");
    await drain();
    b0.frontier = frontierDouble();
    table.release(b0); // idle, parkable (a's waiter may not have it)
    const b1 = new TrackedLease(table, "b", "b1");
    await drain();
    expect(a3.state, "a holds more than its cap").toBe("waiting");
    expect(b1.state, "b's turn waits while its own idle session could be parked").toBe("leased");
    for (const s of running) table.release(s);
    await drain();
    expect(a3.state).toBe("leased");
  });

  it("a sequence freed while the engine hands another to a waiter still goes to the next waiter", async () => {
    const { engine, checkpoints, table } = setup(4);
    for (const id of ["v", "x", "y"]) await idleSession(table, "t", id);
    table.admitEpoch("t", "y", 1);
    const running = await table.lease("t", "r");
    const parkV = new Gate();
    checkpoints.saveTimings.push({ kind: "gate", gate: parkV });
    const w1 = new TrackedLease(table, "t", "w1"); // parks "v" (its write held)
    await drain();
    engine.acquireGate = new Gate();
    const w2 = new TrackedLease(table, "t", "w2"); // parks "x": its sequence goes to w1, whose acquire is held
    await drain();
    expect([w1.state, w2.state, engine.acquiring]).toEqual(["waiting", "waiting", 1]);
    // The engine takes w1's sequence; before w1 hears of it, "y" is superseded and frees its own.
    engine.afterTake = () => table.admitEpoch("t", "y", 2);
    engine.acquireGate.resolve();
    await drain();
    expect([w1.state, w2.state], 'w2 sleeps beside the sequence "y" freed').toEqual(["leased", "leased"]);
    parkV.resolve();
    await drain();
    table.release(running);
  });

  it("a failed restore does not keep the sequence from the next waiter", async () => {
    const { checkpoints, table } = setup(1);
    const running = await table.lease("t", "r");
    const w1 = new TrackedLease(table, "t", "w1");
    const w2 = new TrackedLease(table, "t", "w2");
    await drain();
    checkpoints.restoreTimings.push({ kind: "fail", error: new Error("restore failed") });
    table.release(running); // w1 parks "r", takes the sequence, and its restore fails
    await drain();
    expect(w1.state).toBe("failed");
    expect(w2.state).toBe("leased");
  });

  it("a lone tenant is not held by the sharing cap once the other tenant's window has passed", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    const { table } = setup(2, { tenantMaxSequences: 1 });
    await idleSession(table, "u", "other"); // another tenant used the worker: the cap binds
    const t1 = await table.lease("t", "t1");
    const t2 = new TrackedLease(table, "t", "t2");
    await drain();
    expect(t2.state, "t holds its cap of one running turn while u may come back").toBe("waiting");
    vi.advanceTimersByTime(61_000); // u has not been seen for the sharing window: t is alone
    await drain();
    expect(t2.state, "t alone, one session idle to park, yet its turn waits for its own running one").toBe("leased");
    table.release(t1);
  });
});
