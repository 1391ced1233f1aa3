/**
 * Issue 42, items 1 and 2, randomized: the real session table over an engine double and checkpoint
 * doubles, driven by seeded random programs of arrivals (several tenants, a sharing cap), cancelled
 * waiters, turns that end (plainly, on tool calls, in errors), parking and tool-frontier writes and
 * restores that finish now, later or fail, superseded epochs, dropped sessions and time passing.
 * After every step the scheduler's invariants are checked against a model the test keeps itself:
 * - no eligible waiter sleeps while a sequence is free, nor while an idle session could be parked
 *   for it (parks in flight excepted) — eligibility computed here from the tenants seen, so a lone
 *   tenant held by the sharing cap fails it;
 * - a cancelled waiter is gone from the queue at once, rejected, never restored, holds nothing;
 * - the queue's count equals the turns the model knows to be waiting;
 * - at the end, with every gate opened and every turn finished, every lease has settled.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LeasedSession } from "../../../gpu-worker/session/live-session.ts";
import { SessionTable } from "../../../gpu-worker/session/session-table.ts";
import { FAIR_SHARE_WINDOW_MS } from "../../../gpu-worker/session/tenant-share.ts";
import { WorkerErrorCode } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { CheckpointsDouble, EngineDouble, frontierDouble } from "../../support/scheduler-doubles.ts";

const TENANTS = ["t0", "t1", "t2"];

type Op =
  | { kind: "arrive"; tenant: number; session: number; abortable: boolean }
  | { kind: "abort"; pick: number }
  | { kind: "finish"; pick: number; outcome: "ended" | "tools" | "error" }
  | { kind: "gate"; pick: number; fail: boolean }
  | { kind: "epoch"; pick: number }
  | { kind: "drop"; pick: number }
  | { kind: "time"; seconds: number };

/** Mostly one tenant, so it often runs alone (no cap) before another arrives and the cap binds. */
const tenantArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 2, arbitrary: fc.constant(1) },
  { weight: 1, arbitrary: fc.constant(2) },
);

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("arrive" as const),
      tenant: tenantArb,
      session: fc.nat(3),
      abortable: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("abort" as const), pick: fc.nat(20) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("finish" as const),
      pick: fc.nat(20),
      outcome: fc.constantFrom("ended" as const, "tools" as const, "error" as const),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("gate" as const), pick: fc.nat(20), fail: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("epoch" as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("drop" as const), pick: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("time" as const), seconds: fc.constantFrom(1, 20, 45, 70) }) },
);

interface Setup {
  sequences: number;
  cap: number | undefined;
  maxQueue: number;
  steps: ("now" | "gate" | "fail")[];
}

const setupArb: fc.Arbitrary<Setup> = fc.record({
  sequences: fc.integer({ min: 1, max: 4 }),
  cap: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
  maxQueue: fc.integer({ min: 2, max: 12 }),
  steps: fc.array(fc.constantFrom("now" as const, "gate" as const, "fail" as const), { minLength: 1, maxLength: 16 }),
});

interface LeaseRecord {
  tenant: string;
  /** Unique across tenants (the doubles see only session ids). */
  id: string;
  controller: AbortController | undefined;
  state: "pending" | "leased" | "failed" | "released";
  session: LeasedSession | undefined;
  error: unknown;
  /** Restores of its session seen when it was cancelled while waiting (checked, then cleared, by the next check). */
  abortedAfterRestores: number | undefined;
  /** Its failure was checked against the queue bound (once, in the step it failed). */
  refusalChecked?: boolean;
}

class Run {
  readonly engine: EngineDouble;
  readonly checkpoints = new CheckpointsDouble();
  readonly table: SessionTable;
  readonly records: LeaseRecord[] = [];
  /** When each tenant last called lease (the table's sharing window, modelled here). */
  readonly lastLease = new Map<string, number>();
  readonly epochs = new Map<string, number>();
  #step = 0;

  constructor(readonly setup: Setup) {
    this.engine = new EngineDouble(setup.sequences);
    this.checkpoints.policy = () => setup.steps[this.#step++ % setup.steps.length] ?? "now";
    this.table = new SessionTable(this.engine, this.checkpoints.asCheckpoints, {
      maxQueue: setup.maxQueue,
      checkpointDelayMs: 0,
      tenantMaxSequences: setup.cap,
    });
  }

  pending(): LeaseRecord[] {
    return this.records.filter((r) => r.state === "pending");
  }

  async apply(o: Op): Promise<void> {
    switch (o.kind) {
      case "arrive": {
        const tenant = TENANTS[o.tenant] ?? "t0";
        const record: LeaseRecord = {
          tenant,
          id: `${tenant}-s${o.session}`,
          controller: o.abortable ? new AbortController() : undefined,
          state: "pending",
          session: undefined,
          error: undefined,
          abortedAfterRestores: undefined,
        };
        this.records.push(record);
        // As the service does: the request's epoch first (the session's current one here, never stale).
        const epoch = this.epochs.get(record.id) ?? 1;
        this.epochs.set(record.id, epoch);
        this.table.admitEpoch(tenant, record.id, epoch);
        this.lastLease.set(tenant, Date.now());
        this.table.lease(tenant, record.id, undefined, record.controller?.signal).then(
          (session) => {
            record.state = "leased";
            record.session = session;
          },
          (error: unknown) => {
            record.state = "failed";
            record.error = error;
          },
        );
        return;
      }
      case "abort": {
        const cancellable = this.pending().filter((r) => r.controller && !r.controller.signal.aborted);
        const record = cancellable[o.pick % Math.max(1, cancellable.length)];
        if (!record?.controller) return;
        if (this.#waiting(record)) record.abortedAfterRestores = this.#restoresOf(record.id);
        record.controller.abort(new Error("client went away"));
        return;
      }
      case "finish": {
        const leased = this.records.filter((r) => r.state === "leased");
        const record = leased[o.pick % Math.max(1, leased.length)];
        if (!record?.session) return;
        record.state = "released";
        if (o.outcome === "error") this.table.release(record.session);
        else {
          record.session.frontier = frontierDouble(o.outcome === "tools");
          if (o.outcome === "tools") this.table.saveInBackground(record.session, "tool-frontier");
          else this.table.release(record.session);
        }
        return;
      }
      case "gate": {
        const step = this.checkpoints.pending[o.pick % Math.max(1, this.checkpoints.pending.length)];
        if (!step) return;
        if (o.fail) step.gate.reject(new Error("checkpoint step failed"));
        else step.gate.resolve();
        return;
      }
      case "epoch": {
        // The session ran on another worker meanwhile: its state here is superseded (dropped when idle).
        const resident = this.table.residents();
        const pick = resident[o.pick % Math.max(1, resident.length)];
        if (!pick) return;
        const epoch = (this.epochs.get(pick.sessionId) ?? 1) + 1;
        this.epochs.set(pick.sessionId, epoch);
        this.table.admitEpoch(pick.tenant, pick.sessionId, epoch);
        return;
      }
      case "drop": {
        const resident = this.table.residents();
        const pick = resident[o.pick % Math.max(1, resident.length)];
        if (pick) this.table.drop(pick.tenant, pick.sessionId);
        return;
      }
      case "time":
        vi.advanceTimersByTime(o.seconds * 1000);
        return;
    }
  }

  /** Let every callback run (promise jobs, immediates, timers due now). */
  async settle(): Promise<void> {
    for (let i = 0; i < 12; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      vi.advanceTimersByTime(0);
    }
  }

  check(context: string): void {
    const { table, engine, checkpoints } = this;
    const saving = checkpoints.savingSessions();
    const restoring = checkpoints.restoringSessions();
    const pending = this.pending();
    // The queue's count: pending leases that are not restoring and not waiting for their own session's write.
    const waiting = pending.filter((r) => this.#waiting(r));
    expect(table.stats().queued, `${context}: queue count`).toBe(waiting.length);
    // The queue never holds more than its bound, and refuses a turn (OVERLOADED) only while full: a
    // share refuses nobody while room is left (the shares lend it out, and take it back when full).
    expect(waiting.length, `${context}: queue bound`).toBeLessThanOrEqual(this.setup.maxQueue);
    for (const r of this.records) {
      if (r.state !== "failed" || r.refusalChecked) continue;
      r.refusalChecked = true;
      if ((r.error as { code?: unknown } | undefined)?.code !== WorkerErrorCode.OVERLOADED) continue;
      expect(waiting.length, `${context}: a turn refused while the queue had room`).toBe(this.setup.maxQueue);
    }
    // Eligibility, from this model: the cap binds only while another tenant leased within the window.
    const now = Date.now();
    const headroom = (tenant: string): number => {
      const cap = this.setup.cap;
      const shared = [...this.lastLease].some(([t, at]) => t !== tenant && now - at < FAIR_SHARE_WINDOW_MS);
      if (cap === undefined || !shared) return Number.POSITIVE_INFINITY;
      const held = this.records.filter(
        (r) => r.tenant === tenant && (r.state === "leased" || (r.state === "pending" && restoring.has(r.id))),
      ).length;
      return cap - held;
    };
    let demand = 0;
    for (const tenant of TENANTS) {
      const n = waiting.filter((r) => r.tenant === tenant).length;
      demand += Math.min(n, Math.max(0, headroom(tenant)));
    }
    if (demand > 0) {
      expect(engine.stats().sequencesFree, `${context}: an eligible turn waits while a sequence is free`).toBe(0);
      const busy = new Set(this.records.filter((r) => r.state === "leased" || r.state === "pending").map((r) => r.id));
      const parkable = table
        .residents()
        .filter((s) => table.isResident(s.tenant, s.sessionId) && !busy.has(s.sessionId) && !saving.has(s.sessionId));
      const parksInFlight = checkpoints.pending.filter((p) => p.kind === "save" && p.reason === "parked").length;
      if (parkable.length > 0) {
        expect(
          parksInFlight,
          `${context}: eligible turns wait while idle sessions could be parked`,
        ).toBeGreaterThanOrEqual(demand);
      }
    }
    // Waiters cancelled in this step: rejected at once, never restored, holding nothing.
    for (const r of this.records) {
      if (r.abortedAfterRestores === undefined) continue;
      expect(r.state, `${context}: a cancelled waiter settles at once`).toBe("failed");
      expect(r.error, `${context}: with its signal's reason`).toMatchObject({ message: "client went away" });
      expect(this.#restoresOf(r.id), `${context}: a cancelled waiter is never restored`).toBe(r.abortedAfterRestores);
      expect(table.isResident(r.tenant, r.id), `${context}: a cancelled waiter holds no sequence`).toBe(false);
      r.abortedAfterRestores = undefined;
    }
  }

  /** Open every gate and finish every turn until nothing is left pending; true when all settled. */
  async finishAll(): Promise<boolean> {
    for (let round = 0; round < 200; round++) {
      for (const step of [...this.checkpoints.pending]) step.gate.resolve();
      for (const r of this.records.filter((x) => x.state === "leased")) {
        r.state = "released";
        if (r.session) this.table.release(r.session);
      }
      await this.settle();
      this.check(`finishing, round ${round}`);
      if (this.pending().length === 0 && this.checkpoints.pending.length === 0) return true;
    }
    return false;
  }

  #waiting(r: LeaseRecord): boolean {
    return (
      r.state === "pending" &&
      !this.#waitingForSession(r) &&
      !this.checkpoints.restoringSessions().has(r.id) &&
      !this.checkpoints.savingSessions().has(r.id)
    );
  }

  /** An earlier request of the same session holds it (leased, or itself still pending): r waits for the session, not in the queue. */
  #waitingForSession(r: LeaseRecord): boolean {
    const at = this.records.indexOf(r);
    return this.records.some((q, i) => i < at && q.id === r.id && (q.state === "leased" || q.state === "pending"));
  }

  #restoresOf(id: string): number {
    return this.checkpoints.restored.filter((x) => x === id).length;
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** Fixed seeds: a failure replays exactly (fast-check prints the shrunk program). */
const SEEDS = [1, 42];

describe("scheduler invariants under random programs", () => {
  it.each(SEEDS)(
    "hold after every step, and every lease settles once the gates open and the turns end (seed %i)",
    async (seed) => {
      await fc.assert(
        fc.asyncProperty(setupArb, fc.array(op, { minLength: 5, maxLength: 80, size: "max" }), async (setup, ops) => {
          const run = new Run(setup);
          for (const [i, o] of ops.entries()) {
            await run.apply(o);
            await run.settle();
            run.check(`step ${i} (${o.kind})`);
          }
          expect(await run.finishAll()).toBe(true);
          expect(run.table.stats().queued).toBe(0);
          // Every sequence is free or held by a resident session.
          expect(run.engine.stats().sequencesFree + run.table.stats().resident).toBe(setup.sequences);
        }),
        { seed, numRuns: 400 },
      );
    },
  );
});
