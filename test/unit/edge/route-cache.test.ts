import { describe, expect, it } from "vitest";
import { type CachedRoute, RouteCache, type RouteLookup } from "../../../edge/session/route-cache.ts";

const W1 = "http://w1";
const W2 = "http://w2";
const route = (extra: Partial<CachedRoute> = {}): CachedRoute => ({
  workerUrl: W1,
  epoch: 3,
  prefix: "p",
  pendingToolUseIds: 0,
  at: 1000,
  ...extra,
});
const lookup = (extra: Partial<RouteLookup> = {}): RouteLookup => ({
  tenant: "a",
  sessionId: "s",
  hinted: false,
  firstTurn: false,
  prefix: "p",
  routable: [W1, W2],
  now: 2000,
  ...extra,
});

describe("RouteCache", () => {
  it("answers a confirmed route once, until the turn that took it is recorded again", () => {
    const cache = new RouteCache(30_000);
    cache.remember("a", "s", route());
    expect(cache.take(lookup())).toEqual(route());
    expect(cache.take(lookup())).toBeUndefined(); // in flight: a concurrent request asks the DO
    cache.remember("a", "s", route({ epoch: 4, at: 3000 }));
    expect(cache.take(lookup({ now: 3000 }))?.epoch).toBe(4);
  });

  it("never answers another tenant, whatever the session id", () => {
    const cache = new RouteCache();
    cache.remember("a", "s", route());
    expect(cache.take(lookup({ tenant: "b" }))).toBeUndefined();
    expect(cache.take(lookup({ tenant: "a\u0000s", sessionId: "" }))).toBeUndefined();
    expect(cache.take(lookup())).toBeDefined(); // still there for its own tenant
  });

  it("drops a route confirmed before its worker last came back (restarted, or back from down or drain)", () => {
    const cache = new RouteCache(30_000);
    cache.remember("a", "s", route({ at: 1000 }));
    // Up since before the route was confirmed: the route holds.
    expect(cache.take(lookup({ upSince: new Map([[W1, 900]]) }))).toBeDefined();
    cache.remember("a", "s", route({ at: 1000 }));
    // Came back after it: the session may have moved meanwhile, and the worker lost its epochs.
    expect(cache.take(lookup({ upSince: new Map([[W1, 1500]]) }))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("drops a route past its lifetime or on a worker that is no longer routable", () => {
    const cache = new RouteCache(30_000);
    cache.remember("a", "s", route());
    expect(cache.take(lookup({ now: 1000 + 30_000 }))).toBeUndefined();
    expect(cache.size).toBe(0);
    cache.remember("a", "s", route());
    expect(cache.take(lookup({ routable: [W2] }))).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it("leaves a changed system + tools to the DO (branch or a new recorded prefix)", () => {
    const cache = new RouteCache();
    cache.remember("a", "s", route());
    expect(cache.take(lookup({ prefix: "q" }))).toBeUndefined();
    expect(cache.take(lookup({ prefix: undefined }))).toBeUndefined();
    expect(cache.take(lookup())).toBeDefined();
  });

  it("answers a hinted request only where the DO's hint decision would continue the session", () => {
    const cache = new RouteCache();
    cache.remember("a", "s", route({ pendingToolUseIds: 2 }));
    // Tool calls pending and no results for them: the DO branches.
    expect(cache.take(lookup({ hinted: true }))).toBeUndefined();
    // An ID-routed request continues it (the DO's existing mode does not look at the frontier).
    expect(cache.take(lookup())).toBeDefined();
    cache.remember("a", "s", route());
    // A first turn on a session that has turns: the DO branches.
    expect(cache.take(lookup({ hinted: true, firstTurn: true }))).toBeUndefined();
    expect(cache.take(lookup({ hinted: true }))).toBeDefined();
  });

  it("forgets on request and keeps at most its capacity, oldest out first", () => {
    const cache = new RouteCache(30_000, 2);
    cache.remember("a", "s1", route());
    cache.remember("a", "s2", route());
    cache.remember("a", "s3", route());
    expect(cache.size).toBe(2);
    expect(cache.take(lookup({ sessionId: "s1" }))).toBeUndefined();
    cache.forget("a", "s2");
    expect(cache.take(lookup({ sessionId: "s2" }))).toBeUndefined();
    expect(cache.take(lookup({ sessionId: "s3" }))).toBeDefined();
  });
});
