import { beforeEach, describe, expect, it, vi } from "vitest";
import { MEASURED_TINY_CPU } from "../../../bench/sim/cost-model.ts";
import { simulate } from "../../../bench/sim/pool-sim.ts";
import { SimWorker } from "../../../bench/sim/sim-worker.ts";
import { DEFAULT_CAPACITY } from "../../../bench/sim/sim-workload.ts";
import { deriveSessions } from "../../../bench/sim/trace-sessions.ts";
import { infiniteCacheCeiling, parseTrace, type TraceRequest } from "../../../bench/trace/trace-file.ts";
import { placeSession } from "../../../edge/pool/placement.ts";

// The production policies, wrapped so a test can change them and see the simulation change.
const policy = vi.hoisted(() => ({ firstWorkerOnly: false, mostRecentVictim: false }));
vi.mock("../../../edge/pool/placement.ts", async (importActual) => {
  const actual = await importActual<typeof import("../../../edge/pool/placement.ts")>();
  return {
    ...actual,
    placeSession: (...args: Parameters<typeof actual.placeSession>) => {
      const placement = actual.placeSession(...args);
      const first = args[0][0];
      return policy.firstWorkerOnly && placement && first ? { ...placement, worker: first } : placement;
    },
  };
});
vi.mock("../../../gpu-worker/session/live-session.ts", async (importActual) => {
  const actual = await importActual<typeof import("../../../gpu-worker/session/live-session.ts")>();
  return {
    ...actual,
    leastValuableIdle: (sessions: Iterable<import("../../../gpu-worker/session/live-session.ts").LiveSession>) => {
      if (!policy.mostRecentVictim) return actual.leastValuableIdle(sessions);
      const idle = [...sessions].filter((s) => !s.busy && !s.saving && s.sequence);
      return idle.sort((a, b) => b.lastUsed - a.lastUsed)[0];
    },
  };
});

const line = (timestamp: number, input: number, output: number, ids: number[]) =>
  JSON.stringify({ timestamp, input_length: input, output_length: output, hash_ids: ids });

/** Conversations c of 3 turns each, 4 blocks growing by 2 per turn, arriving interleaved. */
function syntheticTrace(conversations: number): TraceRequest[] {
  const lines: string[] = [];
  for (let turn = 0; turn < 3; turn++) {
    for (let c = 0; c < conversations; c++) {
      const blocks = 4 + 2 * turn;
      const ids = [0, ...Array.from({ length: blocks - 1 }, (_, b) => 1000 * (c + 1) + b)];
      lines.push(line(turn * 60_000 + c * 500, blocks * 512, 100, ids));
    }
  }
  return parseTrace(lines.join("\n"));
}

const run = (workers: number, p: "frontier" | "round-robin", capacity = DEFAULT_CAPACITY) =>
  simulate(deriveSessions(syntheticTrace(12)), {
    workers,
    policy: p,
    capacity,
    cost: MEASURED_TINY_CPU,
    heartbeatMs: 2000,
  });

describe("trace file", () => {
  it("parses requests and computes the infinite-cache ceiling", () => {
    const trace = parseTrace([line(0, 1024, 5, [0, 1]), line(10, 1500, 5, [0, 1, 2])].join("\n"));
    expect(trace.map((r) => r.inputLength)).toEqual([1024, 1500]);
    expect(infiniteCacheCeiling(trace)).toBeCloseTo(1024 / 2524);
  });

  it.each([
    ["not json", "trace line 2: (line): not JSON"],
    [JSON.stringify({ timestamp: 1, input_length: 10, output_length: 1 }), "trace line 2: hash_ids: expected an array"],
    [line(1, -5, 1, []), "trace line 2: input_length: expected a non-negative integer, got -5"],
    [JSON.stringify({ timestamp: "x", input_length: 1, output_length: 1, hash_ids: [1] }), "trace line 2: timestamp"],
    [line(1, 600, 1, [0, 1.5]), "trace line 2: hash_ids.1"],
    [line(1, 600, 1, [0]), "trace line 2: hash_ids: 1 blocks for input_length 600"],
  ])("a malformed line names its line and field: %s", (bad, message) => {
    expect(() => parseTrace(`${line(5, 10, 1, [0])}\n${bad}`)).toThrow(message);
  });

  it("refuses arrivals out of order, naming the line", () => {
    expect(() => parseTrace(`${line(5, 10, 1, [0])}\n\n${line(4, 10, 1, [0])}`)).toThrow("trace line 3: timestamp");
  });
});

describe("conversations from hash ids", () => {
  it("a request extending every full block of an earlier one continues it; a shared system block does not", () => {
    const requests = deriveSessions(
      parseTrace([line(0, 1100, 5, [0, 1, 2]), line(1, 1100, 5, [0, 7, 8]), line(2, 2000, 5, [0, 1, 2, 3])].join("\n")),
    );
    expect(requests.map((r) => r.parent)).toEqual([-1, -1, 0]);
    expect(new Set(requests.map((r) => r.fingerprint)).size).toBe(1);
  });
});

describe("pool simulation drives the production policies", () => {
  beforeEach(() => {
    policy.firstWorkerOnly = false;
    policy.mostRecentVictim = false;
  });

  it("sticky sessions reuse each conversation's live KV; round-robin loses most of it", () => {
    const frontier = run(4, "frontier");
    const roundRobin = run(4, "round-robin");
    expect(frontier.served).toBe(36);
    expect(frontier.liveHits).toBe(24);
    expect(frontier.reusedTokens).toBeGreaterThan(roundRobin.reusedTokens);
  });

  it("a change in placement.ts's placeSession changes where the simulation puts sessions", () => {
    const before = run(4, "frontier");
    policy.firstWorkerOnly = true;
    const after = run(4, "frontier");
    expect(before.perWorkerRequests.filter((n) => n > 0).length).toBeGreaterThan(1);
    expect(after.perWorkerRequests).toEqual([36, 0, 0, 0]);
  });

  it("a change in live-session.ts's parking choice changes the simulation's reuse", () => {
    const capacity = { ...DEFAULT_CAPACITY, sequences: 4 };
    const before = run(1, "frontier", capacity);
    policy.mostRecentVictim = true;
    const after = run(1, "frontier", capacity);
    expect(before.parks).toBeGreaterThan(0);
    expect(after.restores).not.toBe(before.restores);
  });
});

describe("follow-ups of a busy parent", () => {
  // A parent decoding a short answer, then two children of it arriving before it ends (a fork).
  const forked = () =>
    deriveSessions(
      parseTrace(
        [
          line(0, 2048, 200, [0, 1, 2, 3]),
          line(1000, 3072, 50, [0, 1, 2, 3, 10, 11]),
          line(1100, 3072, 50, [0, 1, 2, 3, 20, 21]),
        ].join("\n"),
      ),
    );

  it("wait behind the parent's running turn instead of re-prefilling it; the second child of a fork branches", () => {
    const requests = forked();
    expect(requests.map((r) => r.parent)).toEqual([-1, 0, 0]);
    const result = simulate(requests, {
      workers: 1,
      policy: "frontier",
      capacity: DEFAULT_CAPACITY,
      cost: MEASURED_TINY_CPU,
      heartbeatMs: 2000,
    });
    expect(result.waits).toBe(2);
    // Only one child continues the parent's live KV (its 4 blocks and its output); the sibling branches.
    expect(result.liveHits).toBe(1);
    expect(result.branches).toBe(1);
    expect(result.reusedWithOutput).toBeGreaterThanOrEqual(2048 + 200 - 1);
  });

  it("branch when the parent's turn holds the session longer than a re-prefill takes", () => {
    const slow = { ...MEASURED_TINY_CPU, decodeTokensPerSecond: 20 };
    const result = simulate(forked(), {
      workers: 1,
      policy: "frontier",
      capacity: DEFAULT_CAPACITY,
      cost: slow,
      heartbeatMs: 2000,
    });
    expect(result.waits).toBe(0);
    expect(result.branches).toBe(2);
    expect(result.liveHits).toBe(0);
  });
});

describe("placement fix found by the simulation", () => {
  it("at equal load (every sequence holding an idle session) a new session goes to the worker running fewer turns", () => {
    const views = ["w0", "w1"].map((id) => {
      const view = new SimWorker(id, DEFAULT_CAPACITY).report();
      view.residentSessions = view.sequencesTotal;
      view.prefixes = ["sys"];
      return view;
    });
    const [w0, w1] = views;
    if (!w0 || !w1) throw new Error("two views");
    w0.activeRequests = 6;
    expect(placeSession(views, { prefix: "sys" })?.worker.id).toBe("w1");
    expect(placeSession(views, {})?.worker.id).toBe("w1");
  });
});
