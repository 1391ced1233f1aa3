import { describe, expect, it } from "vitest";
import {
  notePlacement,
  type PoolWorker,
  PREFIX_LOAD_MARGIN,
  PREFIX_TURNS_PER_CHUNK,
  placeSession,
  queueFull,
  workerLoad,
} from "../../../edge/pool/placement.ts";

function worker(url: string, extra: Partial<PoolWorker> = {}): PoolWorker {
  return {
    id: url,
    url,
    region: "local",
    state: "up",
    static: false,
    modelIdentity: "m",
    sequencesTotal: 4,
    sequencesFree: 4,
    queueDepth: 0,
    activeRequests: 0,
    residentSessions: 0,
    pending: 0,
    prefixes: [],
    lastHeartbeat: 1,
    ...extra,
  };
}

describe("placeSession", () => {
  it("prefers a worker holding the prefix while it has room, even when another is less loaded", () => {
    const workers = [worker("a"), worker("b", { residentSessions: 2, prefixes: ["p"] })];
    expect(placeSession(workers, { prefix: "p" })).toMatchObject({
      worker: { url: "b" },
      reason: "prefix",
      prefixKnown: true,
    });
  });

  it("prefers a holder whose sequences are all taken by idle sessions (it parks one) when others are as busy", () => {
    // Both workers hold 4 idle sessions on 4 sequences: the holder starts the session at once by
    // parking one; the other would have to load the prefix's anchor or prefill it cold.
    const workers = [
      worker("a", { residentSessions: 4, sequencesFree: 0 }),
      worker("b", { residentSessions: 4, sequencesFree: 0, prefixes: ["p"] }),
    ];
    expect(placeSession(workers, { prefix: "p" })).toMatchObject({ worker: { url: "b" }, reason: "prefix" });
    // Within the margin the holder still wins (more than the margin beyond it, it does not: next test).
    const withinMargin = [worker("a", { residentSessions: 2 }), worker("b", { residentSessions: 4, prefixes: ["p"] })];
    expect(PREFIX_LOAD_MARGIN).toBe(0.5);
    expect(placeSession(withinMargin, { prefix: "p" })?.worker.url).toBe("b");
  });

  it("falls back to the least loaded when the prefix holder is much busier, running a turn per sequence, or queueing", () => {
    const busier = [worker("a", { residentSessions: 1 }), worker("b", { residentSessions: 4, prefixes: ["p"] })];
    expect(placeSession(busier, { prefix: "p" })).toMatchObject({
      worker: { url: "a" },
      reason: "load",
      prefixKnown: true,
    });
    const running = [
      worker("a", { residentSessions: 4 }),
      worker("b", { residentSessions: 4, activeRequests: 3, pending: 1, prefixes: ["p"] }),
    ];
    expect(placeSession(running, { prefix: "p" })).toMatchObject({ worker: { url: "a" }, reason: "load" });
    const queued = [worker("a", { residentSessions: 3 }), worker("b", { queueDepth: 1, prefixes: ["p"] })];
    expect(placeSession(queued, { prefix: "p" })?.reason).toBe("load");
  });

  it("places a stream of sessions over a few prefixes on their holders once the pool is full of idle sessions", () => {
    // The bench's shape: 24 sessions over 4 prefixes on 2 x 4 sequences, every session staying resident
    // (idle) and each placement reported by a heartbeat before the next one.
    const workers = [worker("a"), worker("b")];
    let known = 0;
    let hits = 0;
    for (let i = 0; i < 24; i++) {
      const prefix = `p${i % 4}`;
      const placed = placeSession(workers, { prefix });
      if (!placed) throw new Error("no placement");
      if (placed.prefixKnown) known++;
      if (placed.reason === "prefix") hits++;
      const w = placed.worker;
      w.residentSessions = Math.min(w.sequencesTotal, w.residentSessions + 1);
      w.sequencesFree = w.sequencesTotal - w.residentSessions;
      if (!w.prefixes.includes(prefix)) w.prefixes = [prefix, ...w.prefixes];
    }
    expect(known).toBe(20);
    expect(hits).toBe(20);
    expect(workers.map((w) => w.residentSessions)).toEqual([4, 4]);
  });

  it("counts placements since the last heartbeat as load, so a burst spreads", () => {
    const workers = [worker("a"), worker("b")];
    const chosen: string[] = [];
    for (let i = 0; i < 6; i++) {
      const placed = placeSession(workers, {});
      if (!placed) throw new Error("no placement");
      placed.worker.pending += 1;
      chosen.push(placed.worker.url);
    }
    expect(chosen.filter((u) => u === "a")).toHaveLength(3);
    expect(workerLoad(worker("x", { residentSessions: 2, pending: 1, queueDepth: 1 }))).toBe(1);
  });

  it("takes turns among equally loaded workers across heartbeats, the least recently placed first", () => {
    // A large pool at rest: every sequence holds an idle session and every worker holds the system
    // prefix, so all read the same load. Each session's turn ends before the next heartbeat, which
    // resets `pending`: ties broken by id alone sent every one of them to the first worker.
    const workers = ["a", "b", "c", "d"].map((url) => worker(url, { residentSessions: 4, prefixes: ["p"] }));
    const chosen: string[] = [];
    for (let t = 1; t <= 8; t++) {
      const placed = placeSession(workers, { prefix: "p" });
      if (!placed) throw new Error("no placement");
      notePlacement(placed.worker, "p", undefined, t);
      chosen.push(placed.worker.url);
      for (const w of workers) w.pending = 0;
    }
    expect(chosen).toEqual(["a", "b", "c", "d", "a", "b", "c", "d"]);
    // A deeper holder still wins over the turn order.
    workers[2]!.prefixes = ["p", "q"];
    expect(placeSession(workers, { prefix: "p", chain: ["p", "q"] })?.worker.url).toBe("c");
  });

  it("leaves a holder running more turns than its deeper prefix is worth for the least loaded worker", () => {
    // A burst: the holder of system + tools has 2 sessions placed since its heartbeat (each prefills
    // ahead of a new one on its engine) while another worker sits idle; one entry deeper is worth
    // one turn more.
    expect(PREFIX_TURNS_PER_CHUNK).toBe(1);
    const holder = worker("a", { residentSessions: 1, activeRequests: 1, pending: 1, prefixes: ["p", "c1", "c2"] });
    const idle = worker("b");
    expect(placeSession([holder, idle], { prefix: "p" })).toMatchObject({ worker: { url: "b" }, reason: "load" });
    expect(placeSession([holder, { ...idle, activeRequests: 1 }], { prefix: "p" })?.worker.url).toBe("a");
    // Three entries (system + tools and two chunks) beyond the idle worker: worth its two turns.
    expect(placeSession([holder, idle], { prefix: "p", chain: ["p", "c1", "c2"] })).toMatchObject({
      worker: { url: "a" },
      reason: "prefix",
      depth: 2,
    });
    // Against a worker holding system + tools too, only the two chunks count: two turns, not three.
    const shallow = worker("b", { prefixes: ["p"] });
    const chain = ["p", "c1", "c2"];
    expect(placeSession([holder, shallow], { prefix: "p", chain })?.worker.url).toBe("a");
    expect(placeSession([{ ...holder, pending: 2 }, shallow], { prefix: "p", chain })).toMatchObject({
      worker: { url: "b" },
      reason: "prefix",
      depth: 0,
    });
  });

  it("never places on a worker that is down, draining, drained or excluded", () => {
    const workers = [
      worker("down", { state: "down" }),
      worker("draining", { state: "draining", prefixes: ["p"] }),
      worker("drained", { state: "drained" }),
      worker("failed"),
      worker("ok", { residentSessions: 3 }),
    ];
    expect(placeSession(workers, { prefix: "p", exclude: ["failed"] })).toMatchObject({
      worker: { url: "ok" },
      reason: "load",
    });
    expect(placeSession([worker("down", { state: "down" })], {})).toBeUndefined();
  });

  it("skips a worker whose queue is full (or fills with the sessions placed since its heartbeat), prefix or not", () => {
    // The holder of the prefix runs a turn per sequence and its queue (2) is full: a new session
    // there would be refused OVERLOADED while the other worker has room.
    const full = worker("holder", { activeRequests: 6, queueDepth: 2, queueCapacity: 2, prefixes: ["p"] });
    const other = worker("other", { residentSessions: 8, activeRequests: 4 });
    expect(queueFull(full)).toBe(true);
    expect(placeSession([full, other], { prefix: "p" })).toMatchObject({ worker: { url: "other" }, reason: "load" });
    // Placements since the last heartbeat beyond its free sequences will wait too.
    const filling = worker("filling", { activeRequests: 4, pending: 2, queueCapacity: 2 });
    expect(queueFull(filling)).toBe(true);
    expect(queueFull({ ...filling, pending: 1 })).toBe(false);
    // Every queue full: no placement (the edge answers 529 without sending the turn to be refused).
    expect(placeSession([full], { prefix: "p" })).toBeUndefined();
    // The requests waiting for a sequence are in `activeRequests` too (worker.proto): they count once.
    // (Counted twice, a worker with 100 of 160 places taken refused every new session: 529s at 256 agents.)
    const halfFull = worker("half", { activeRequests: 104, queueDepth: 100, queueCapacity: 160 });
    expect(queueFull(halfFull)).toBe(false);
    expect(queueFull({ ...halfFull, pending: 59 })).toBe(false);
    expect(queueFull({ ...halfFull, pending: 60 })).toBe(true);
    // A worker that does not report its queue's capacity (an older one) is never taken for full.
    expect(queueFull(worker("old", { activeRequests: 4, queueDepth: 50 }))).toBe(false);
  });
});
