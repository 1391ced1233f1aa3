/** Exact turn memory and sampled-span token memory: tenant scoping and bounds. */
import { describe, expect, it } from "vitest";
import { SpanTokenMemory } from "../../../gpu-worker/continuation/span-token-memory.ts";
import { TurnMemory } from "../../../gpu-worker/continuation/turn-memory.ts";

describe("TurnMemory", () => {
  it("keeps a turn under every ID, per tenant", () => {
    const memory = new TurnMemory();
    memory.remember("a", ["toolu_1", "toolu_2"], { raw: "RAW", toolUseIds: ["toolu_1", "toolu_2"] });
    expect(memory.recall("a", "toolu_2")?.raw).toBe("RAW");
    expect(memory.recall("b", "toolu_1")).toBeUndefined();
  });

  it("evicts the least recently used entries past its count and byte bounds", () => {
    const memory = new TurnMemory({ maxEntries: 2, maxBytes: 1_000_000 });
    memory.remember("a", ["x"], { raw: "1", toolUseIds: ["x"] });
    memory.remember("a", ["y"], { raw: "2", toolUseIds: ["y"] });
    memory.recall("a", "x"); // x is now the most recent
    memory.remember("a", ["z"], { raw: "3", toolUseIds: ["z"] });
    expect(memory.recall("a", "y")).toBeUndefined();
    expect(memory.recall("a", "x")?.raw).toBe("1");
    const small = new TurnMemory({ maxEntries: 100, maxBytes: 500 });
    for (let i = 0; i < 10; i++) small.remember("a", [`id${i}`], { raw: "r".repeat(100), toolUseIds: [`id${i}`] });
    expect(small.bytes).toBeLessThanOrEqual(500);
    expect(small.recall("a", "id9")).toBeDefined();
    expect(small.recall("a", "id0")).toBeUndefined();
  });
});

describe("SpanTokenMemory", () => {
  it("returns the sampled tokens of a span, per tenant, within its token budget", () => {
    const memory = new SpanTokenMemory({ maxEntries: 10, maxTokens: 5 });
    memory.remember("a", "hello", [1, 2, 3]);
    expect(memory.recall("a", "hello")).toEqual([1, 2, 3]);
    expect(memory.recall("b", "hello")).toBeUndefined();
    memory.remember("a", "world", [4, 5, 6]);
    expect(memory.recall("a", "hello")).toBeUndefined();
    expect(memory.recall("a", "world")).toEqual([4, 5, 6]);
  });
});
