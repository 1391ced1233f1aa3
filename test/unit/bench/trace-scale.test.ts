import { describe, expect, it } from "vitest";
import { findParents } from "../../../bench/trace/conversations.ts";
import { scaleInput, scaleOutput, scaleTrace } from "../../../bench/trace/scale.ts";
import { infiniteCacheCeiling, type TraceRequest } from "../../../bench/trace/trace-file.ts";

let index = 0;
function req(timestamp: number, inputLength: number, hashIds: number[], outputLength = 10): TraceRequest {
  return { index: index++, timestamp, inputLength, outputLength, hashIds };
}

describe("conversation detection", () => {
  it("a request continues the earlier one whose full blocks its ids start with", () => {
    const trace = [
      req(0, 1100, [0, 1, 2]), // full blocks [0, 1]
      req(10, 2000, [0, 1, 5, 6]), // starts with [0, 1]: continues 0
      req(20, 3000, [0, 1, 5, 7, 8, 9]), // [0, 1, 5] is 1's full blocks ([0,1,5,6] has 3 full): continues 1
      req(30, 1500, [0, 9, 9]), // shares only block 0 (every request does): a first turn
    ];
    expect(findParents(trace, 512)).toEqual([undefined, 0, 1, undefined]);
  });

  it("the longest shared prefix wins, then the latest request; a longer request is never a parent", () => {
    const trace = [
      req(0, 1024, [0, 1]),
      req(5, 1024, [0, 1]), // same prefix again: not longer, so not a next turn of 0
      req(10, 1600, [0, 1, 2, 3]), // two candidates with the same ids: the latest (1)
      req(20, 900, [0, 1]), // shorter than its candidates: a first turn
    ];
    expect(findParents(trace, 512)).toEqual([undefined, undefined, 1, undefined]);
  });
});

describe("trace scaling", () => {
  it("scales lengths with the block: full blocks stay full, the cut block and outputs shrink, at least 1", () => {
    expect(scaleInput(1024, 32)).toBe(64);
    expect(scaleInput(1024 + 256, 32)).toBe(64 + 16);
    expect(scaleInput(1025, 32)).toBe(65);
    expect(scaleInput(1023, 32)).toBe(64); // 511 of 512 rounds to a whole block, never more
    expect(scaleOutput(343, 32)).toBe(21);
    expect(scaleOutput(3, 32)).toBe(1);
  });

  const trace = [
    req(0, 1100, [0, 1, 2], 100),
    req(1000, 700, [0, 3]),
    req(60000, 2300, [0, 1, 8, 4, 5], 50), // starts with 0's full blocks [0, 1]: continues 0
    req(90000, 1100, [0, 3, 6]), // 1 has 1 full block only: a first turn
    req(120000, 600, [0, 7]),
  ];

  it("keeps whole conversations, compresses time and computes both ceilings on the sample", () => {
    const scaled = scaleTrace(trace, { blockTokens: 32, maxRequests: 10, spanSeconds: 12, seed: 3 });
    expect(scaled.requests.map((r) => r.traceIndex)).toEqual([0, 1, 2, 3, 4].map((i) => trace[i]?.index));
    expect(scaled.timeCompression).toBe(10);
    expect(scaled.requests.map((r) => r.arrivalMs)).toEqual([0, 100, 6000, 9000, 12000]);
    const next = scaled.requests[2];
    expect(next?.parent).toBe(0);
    expect(next?.turn).toBe(2);
    expect(next?.inputLength).toBe(scaleInput(2300, 32));
    // Its parent's prompt (69) + output (6) are reusable with own output; by blocks only its first 2 blocks.
    expect(next?.ownOutputReusable).toBe(69 + 6);
    expect(next?.blockReusable).toBe(64);
    const scaledAsTrace = scaled.requests.map((r) => ({ ...r, index: r.id, timestamp: r.arrivalMs }));
    expect(scaled.ceiling.blocks).toBeCloseTo(infiniteCacheCeiling(scaledAsTrace, 32), 12);
    expect(scaled.ceiling.withOwnOutput).toBeGreaterThan(scaled.ceiling.blocks);
  });

  it("samples conversations whole within the budget, the same sample for the same seed", () => {
    const a = scaleTrace(trace, { blockTokens: 32, maxRequests: 3, spanSeconds: 10, seed: 1 });
    const b = scaleTrace(trace, { blockTokens: 32, maxRequests: 3, spanSeconds: 10, seed: 1 });
    expect(a.requests.map((r) => r.traceIndex)).toEqual(b.requests.map((r) => r.traceIndex));
    expect(a.requests.length).toBeLessThanOrEqual(3);
    const ids = new Set(a.requests.map((r) => r.traceIndex));
    expect(ids.has(trace[0]?.index as number)).toBe(ids.has(trace[2]?.index as number));
  });

  it("a follow-up too short to hold its parent's output goes as a first turn", () => {
    const short = [req(0, 1024, [0, 1], 512), req(10, 1100, [0, 1, 2])];
    const scaled = scaleTrace(short, { blockTokens: 32, maxRequests: 10, spanSeconds: 1, seed: 1 });
    expect(scaled.followUpsTooShort).toBe(1);
    expect(scaled.requests[1]?.parent).toBeUndefined();
    expect(scaled.requests[1]?.ownOutputReusable).toBe(scaled.requests[1]?.blockReusable);
  });
});
