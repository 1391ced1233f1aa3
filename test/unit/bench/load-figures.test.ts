/**
 * The load workload's pure parts: its settings, and the figures it reports from turn records and
 * pool samples (stalls, time queued beside a free sequence, suffix-only share, failures, RSS growth).
 */
import { describe, expect, it } from "vitest";
import type { TurnRecord } from "../../../bench/workloads/load/load-agent.ts";
import { frontierFigures, poolFigures, STALL_MS } from "../../../bench/workloads/load/load-figures.ts";
import { lastWaveRssGrowth, loadViolations, rssGrowth } from "../../../bench/workloads/load/load-report.ts";
import { abortsTurn, finishOrder, toolPauseMs } from "../../../bench/workloads/load/load-script.ts";
import { loadSettings } from "../../../bench/workloads/load/load-settings.ts";
import { inStreamRefusal } from "../../../bench/workloads/load/load-turn.ts";
import type { PoolSample } from "../../../bench/workloads/load/pool-sampler.ts";

function turn(over: Partial<TurnRecord>): TurnRecord {
  return {
    wave: 1,
    agent: "w1-a1",
    protocol: "messages",
    tenant: 0,
    turn: 1,
    sentAtMs: 0,
    outcome: "completed",
    ttftMs: 100,
    totalMs: 200,
    promptTokens: 1000,
    cachedTokens: 0,
    outputTokens: 40,
    calls: 1,
    decision: undefined,
    suffixOnly: undefined,
    resent: false,
    statuses: [200],
    refusedInStream: [],
    ...over,
  };
}

/** Samples every 250 ms of one worker: `queued(t)` requests queued, `free(t)` sequences free. */
function samples(seconds: number, queued: (t: number) => number, free: (t: number) => number): PoolSample[] {
  return Array.from({ length: seconds * 4 }, (_, i) => {
    const t = i * 250;
    return {
      atMs: t,
      workers: [
        {
          id: "worker-1",
          state: "up",
          sequencesTotal: 4,
          sequencesFree: free(t),
          queueDepth: queued(t),
          activeRequests: queued(t) + 4 - free(t),
          residentSessions: 4 - free(t),
        },
      ],
    };
  });
}

describe("load settings", () => {
  it("takes --agents and --load keys, and refuses unknown keys and bad values", () => {
    const s = loadSettings(false, "256", "waves=2,workers=1,tenants=1,contend=2,deadline=180,pause=10-20,peer=off");
    expect(s).toMatchObject({ agents: 256, waves: 2, workers: 1, tenants: 1, contend: 2, turnDeadlineMs: 180_000 });
    expect(s.toolPauseMs).toEqual([10, 20]);
    expect(s.peer).toBe(false);
    expect(loadSettings(false, undefined, "protocols=messages+chat").protocols).toEqual(["messages", "chat"]);
    expect(loadSettings(true, undefined, undefined).agents).toBe(4);
    expect(() => loadSettings(false, undefined, "wave=2")).toThrow(/unknown key "wave"/);
    expect(() => loadSettings(false, "0", undefined)).toThrow(/--agents/);
    expect(() => loadSettings(false, undefined, "protocols=grpc")).toThrow(/protocols/);
    expect(() => loadSettings(false, undefined, "abort=0.9")).toThrow(/at most 0.5/);
  });

  it("decides pauses, aborts and result order from the agent's name alone", () => {
    expect(toolPauseMs("w1-a1", 1, [50, 450])).toBe(toolPauseMs("w1-a1", 1, [50, 450]));
    const pauses = Array.from({ length: 200 }, (_, i) => toolPauseMs(`w1-a${i}`, 1, [50, 450]));
    expect(Math.min(...pauses)).toBeGreaterThanOrEqual(50);
    expect(Math.max(...pauses)).toBeLessThanOrEqual(450);
    const aborted = Array.from({ length: 2000 }, (_, i) => abortsTurn(`a${i}`, 1, 0.1)).filter(Boolean).length;
    expect(aborted).toBeGreaterThan(120);
    expect(aborted).toBeLessThan(280);
    expect([...finishOrder("w1-a1", 1, 3)].sort()).toEqual([0, 1, 2]);
  });
});

describe("load figures", () => {
  it("finds a stall: requests queued and no turn completing for STALL_MS, with what the pool showed", () => {
    // Queued all along; turns complete at 1 s and 5 s, then nothing for 60 s.
    const pool = poolFigures(
      samples(
        60,
        () => 3,
        (t) => (t > 10_000 ? 4 : 0),
      ),
      [1000, 5000],
    );
    expect(pool.stalls).toHaveLength(1);
    const [from, to] = pool.stalls[0] as [number, number];
    expect(from).toBe(5000);
    expect(to - from).toBeGreaterThanOrEqual(STALL_MS);
    expect(pool.stalledView?.workers[0]).toMatchObject({ sequencesFree: 4, queueDepth: 3 });
    // Queued beside free sequences from 10.25 s to the end.
    const idle = pool.idleQueued.get("worker-1");
    expect(idle?.longestMs).toBeGreaterThan(49_000);
    expect(pool.idleView?.workers[0]?.sequencesFree).toBe(4);
  });

  it("does not call a busy, completing pool stalled", () => {
    const completions = Array.from({ length: 60 }, (_, i) => i * 1000 + 500);
    const pool = poolFigures(
      samples(
        60,
        () => 8,
        () => 0,
      ),
      completions,
    );
    expect(pool.stalls).toEqual([]);
    expect(pool.idleQueued.get("worker-1")?.totalMs).toBe(0);
  });

  it("counts failures by reason, statuses, and turns 2+ suffix-only apart from re-sent ones", () => {
    const records = [
      turn({ turn: 1, statuses: [429, 200] }),
      turn({ turn: 1, agent: "w1-a4", refusedInStream: [529, 529] }),
      turn({ turn: 2, suffixOnly: true }),
      turn({ turn: 3, suffixOnly: false }),
      turn({ turn: 2, agent: "w1-a2", resent: true, suffixOnly: false }),
      turn({ turn: 1, agent: "w1-a3", outcome: "failed", reason: "deadline", detail: "no reply", statuses: [] }),
    ];
    const f = frontierFigures(records, 9, 2, 0);
    expect(f).toMatchObject({ completed: 5, failed: 1, notSent: 2, resent: 1, retriedTurns: 2 });
    expect(f.refusedInStream.get(529)).toBe(2);
    expect(f.failures.get("deadline")?.count).toBe(1);
    expect(f.statuses.get(429)).toBe(1);
    expect(f.later).toEqual({ completed: 2, suffixOnly: 1, resent: 1, resentSuffixOnly: 0 });
    expect(f.prefilledLater).toBe(3000);
  });

  it("reads an in-stream refusal from the protocols' structured error fields only", () => {
    expect(inStreamRefusal({ type: "error", error: { type: "overloaded_error", message: "x" } })).toBe(529);
    expect(inStreamRefusal({ type: "error", error: { type: "rate_limit_error", message: "x" } })).toBe(429);
    expect(inStreamRefusal({ type: "error", code: "server_overloaded", message: "x", sequence_number: 0 })).toBe(529);
    expect(inStreamRefusal({ message: "x", type: "rate_limit_exceeded", code: "rate_limit_exceeded" })).toBe(429);
    expect(inStreamRefusal({ type: "error", error: { type: "invalid_request_error", message: "overloaded" } })).toBe(
      undefined,
    );
    expect(inStreamRefusal("overloaded_error")).toBe(undefined);
  });

  it("measures RSS growth from the first wave's end to the last's and over the last wave, and fails the run on failed turns", () => {
    const mib = 2 ** 20;
    expect(rssGrowth(new Map([["worker-1", [300 * mib, 310 * mib, 330 * mib, 341 * mib]]]))).toBeCloseTo(0.1, 2);
    expect(rssGrowth(new Map([["worker-1", [300 * mib, 310 * mib]]]))).toBe(Number.NEGATIVE_INFINITY);
    // Over the last wave alone: 330 → 341 MiB (3.3%); the worst worker counts.
    const twoWorkers = new Map([
      ["worker-1", [300 * mib, 310 * mib, 330 * mib, 341 * mib]],
      ["worker-2", [300 * mib, 400 * mib, 400 * mib, 400 * mib]],
    ]);
    expect(lastWaveRssGrowth(twoWorkers)).toBeCloseTo(11 / 330, 4);
    expect(lastWaveRssGrowth(new Map([["worker-1", [300 * mib, 310 * mib]]]))).toBe(Number.NEGATIVE_INFINITY);
    const failing = frontierFigures([turn({ outcome: "failed", reason: "HTTP 529", statuses: [529] })], 1, 0, 0);
    const report = { frontier: failing } as Parameters<typeof loadViolations>[0];
    expect(loadViolations(report)).toEqual(["1 of 1 turns failed (HTTP 529 × 1)"]);
  });
});
