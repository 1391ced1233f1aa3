/** Checkpoint store lookups: longest prefix, tool-use IDs, sessions; tenant and model scoping. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CheckpointMismatchError } from "../../../gpu-worker/checkpoints/store/types.ts";
import { testDataKey } from "../../support/test-data-key.ts";
import { StoreFixture } from "./fixture.ts";

let fx: StoreFixture;
beforeEach(() => {
  fx = new StoreFixture();
});
afterEach(() => fx.dispose());

describe("findLongestPrefix", () => {
  it("picks the longest stored text that is a prefix and ignores non-prefixes", async () => {
    const sys = await fx.write({ text: "<sys>tools</sys>", reason: "cold-anchor" });
    const turn1 = await fx.write({ text: "<sys>tools</sys><u>hello</u>" });
    await fx.write({ text: "<sys>tools</sys><u>hello</u><a>hi there, a longer answer</a>" });
    await fx.write({ text: "<sys>tools</sys><u>goodbye and more text here</u>" });

    const request = "<sys>tools</sys><u>hello</u><a>hi there</a><u>next</u>";
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), request)?.id).toBe(turn1.id);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "<sys>tools</sys><u>bye</u>")?.id).toBe(sys.id);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "<sys>TOOLS</sys><u>hello</u>")).toBeUndefined();
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "<sys>")).toBeUndefined();
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), request, { minTokens: 1000 })).toBeUndefined();
    expect(fx.store.stats()).toMatchObject({ count: 4, hits: 2, misses: 3 });
  });

  it("returns a payload whose text is a byte prefix of the request, verified before the state is read", async () => {
    await fx.write({ text: "prefix A" });
    const request = "prefix A and then the rest";
    const meta = fx.store.findLongestPrefix(testDataKey("tenant-a"), request)!;
    const payload = await fx.load(meta, undefined, request);
    expect(request.startsWith(payload.text)).toBe(true);
    expect(payload).toEqual({ text: "prefix A", tokens: [0, 1, 2, 3, 4, 5, 6, 7], extra: { text: "prefix A" } });

    let readStateCalled = false;
    const load = fx.store.load(
      meta,
      testDataKey("tenant-a"),
      async () => {
        readStateCalled = true;
      },
      { prefixOf: "prefix B and then" },
    );
    await expect(load).rejects.toBeInstanceOf(CheckpointMismatchError);
    expect(readStateCalled).toBe(false);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), request)?.id).toBe(meta.id);
  });

  it("never mixes a surrogate-splitting prefix with a text ending in U+FFFD", async () => {
    await fx.write({ text: "emoji \uFFFD" });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "emoji \u{1F600} and more")).toBeUndefined();
  });
});

describe("tenant scoping", () => {
  it("never returns another tenant's checkpoint, even for identical text and IDs", async () => {
    const text = "<sys>same system prompt</sys><u>same user turn</u>";
    const a = await fx.write({
      tenant: "tenant-a",
      text,
      reason: "tool-frontier",
      sessionId: "s1",
      toolUseIds: ["t1"],
    });
    const b = await fx.write({
      tenant: "tenant-b",
      text,
      reason: "tool-frontier",
      sessionId: "s1",
      toolUseIds: ["t1"],
    });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), `${text} more`)?.id).toBe(a.id);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-b"), `${text} more`)?.id).toBe(b.id);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-c"), `${text} more`)).toBeUndefined();
    expect(fx.store.findByToolUseIds("tenant-a", ["t1"])?.id).toBe(a.id);
    expect(fx.store.findByToolUseIds("tenant-c", ["t1"])).toBeUndefined();
    expect(fx.store.findBySession("tenant-b", "s1")?.id).toBe(b.id);
    expect(fx.store.findBySession("tenant-c", "s1")).toBeUndefined();
    await expect(fx.store.load(a, testDataKey("tenant-b"), async () => {})).rejects.toThrow(/another tenant/);
  });
});

describe("model identity", () => {
  it("never returns checkpoints of another model, and evicts them first", async () => {
    const old = await fx.write({ text: "shared prefix", reason: "tool-frontier", sessionId: "s", toolUseIds: ["x"] });
    fx.reopen({ modelIdentity: "model-b" });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "shared prefix!")).toBeUndefined();
    expect(fx.store.findByToolUseIds("tenant-a", ["x"])).toBeUndefined();
    expect(fx.store.findBySession("tenant-a", "s")).toBeUndefined();
    await expect(fx.store.load(old, testDataKey("tenant-a"), async () => {})).rejects.toThrow();

    const fresh = await fx.write({ text: "shared prefix", reason: "periodic" });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "shared prefix!")?.id).toBe(fresh.id);
    fx.reopen({ modelIdentity: "model-b", budgetBytes: fresh.bytes });
    expect(fx.store.stats().count).toBe(1);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "shared prefix!")?.id).toBe(fresh.id);
  });
});

describe("findByToolUseIds and findBySession", () => {
  it("matches the ID set in any order, newest first, and nothing else", async () => {
    await fx.write({ text: "t1", reason: "tool-frontier", sessionId: "s1", toolUseIds: ["a", "b", "c"] });
    const newer = await fx.write({ text: "t2", reason: "parked", sessionId: "s2", toolUseIds: ["c", "a", "b"] });
    await fx.write({ text: "t3", reason: "periodic", sessionId: "s3", toolUseIds: ["a", "b", "c"] });
    expect(fx.store.findByToolUseIds("tenant-a", ["b", "c", "a"])?.id).toBe(newer.id);
    expect(fx.store.findByToolUseIds("tenant-a", ["c", "b", "a", "a"])?.id).toBe(newer.id);
    expect(fx.store.findByToolUseIds("tenant-a", ["a", "b"])).toBeUndefined();
    expect(fx.store.findByToolUseIds("tenant-a", ["a", "b", "c", "d"])).toBeUndefined();
    expect(fx.store.findByToolUseIds("tenant-a", [])).toBeUndefined();
    expect(newer.toolUseIds).toEqual(["c", "a", "b"]);
  });

  it("finds the newest session checkpoint among tool-frontier, parked and shutdown", async () => {
    await fx.write({ text: "p", reason: "parked", sessionId: "s1" });
    const frontier = await fx.write({ text: "pt", reason: "tool-frontier", sessionId: "s1", toolUseIds: ["x"] });
    await fx.write({ text: "ptp", reason: "periodic", sessionId: "s1" });
    expect(fx.store.findBySession("tenant-a", "s1")?.id).toBe(frontier.id);
    expect(fx.store.findBySession("tenant-a", "s2")).toBeUndefined();
    expect(fx.store.findBySession("tenant-a", "")).toBeUndefined();
  });
});
