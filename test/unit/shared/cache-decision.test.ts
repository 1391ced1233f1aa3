/** The one decision table: every proto value has a word, and the worker's words map back to the same value. */
import { describe, expect, it } from "vitest";
import { decisionToWire, missReasonToWire } from "../../../gpu-worker/continuation/decision-wire.ts";
import { CacheDecision, MissReason } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionOf, decisionWord, missReasonOf, missWord } from "../../../shared/cache-decision.ts";

const values = (e: object) => Object.values(e).filter((v): v is number => typeof v === "number");

describe("cache decision words", () => {
  it("round-trips every decision and miss reason through its word", () => {
    for (const value of values(CacheDecision)) {
      if (value === CacheDecision.UNSPECIFIED) continue;
      expect(decisionOf(decisionWord(value) as Parameters<typeof decisionOf>[0])).toBe(value);
    }
    for (const value of values(MissReason))
      expect(missReasonOf(missWord(value) as Parameters<typeof missReasonOf>[0])).toBe(value);
  });

  it("names the header's words and the worker's", () => {
    expect(decisionWord(CacheDecision.LIVE_TOOL_IDS)).toBe("live-tool-ids");
    expect(missWord(MissReason.NONE)).toBe("none");
    expect(decisionWord(99 as CacheDecision)).toBe("unknown");
    expect(decisionToWire("checkpoint")).toBe(CacheDecision.CHECKPOINT);
    expect(missReasonToWire("")).toBe(MissReason.NONE);
    expect(missReasonToWire("history-edited")).toBe(MissReason.HISTORY_EDITED);
  });
});
