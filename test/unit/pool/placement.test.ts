import { describe, expect, it } from "vitest";
import { type PoolWorker, placeSession, workerLoad } from "../../../edge/pool/placement.ts";

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

  it("falls back to the least loaded when the prefix holder is full or waiting on sequences", () => {
    const full = [worker("a", { residentSessions: 1 }), worker("b", { residentSessions: 4, prefixes: ["p"] })];
    expect(placeSession(full, { prefix: "p" })).toMatchObject({
      worker: { url: "a" },
      reason: "load",
      prefixKnown: true,
    });
    const queued = [worker("a", { residentSessions: 3 }), worker("b", { queueDepth: 1, prefixes: ["p"] })];
    expect(placeSession(queued, { prefix: "p" })?.reason).toBe("load");
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
});
