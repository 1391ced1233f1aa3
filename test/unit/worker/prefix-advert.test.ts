/**
 * The worker's placement advert (gpu-worker/pool/prefix-advert.ts): only prefixes whose KV is still
 * held (a resident session, a stored checkpoint), bounded per report and in holders.
 */
import { describe, expect, it } from "vitest";
import { PrefixAdvert } from "../../../gpu-worker/pool/prefix-advert.ts";

const chain = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`);

describe("PrefixAdvert", () => {
  it("advertises what resident sessions and stored checkpoints hold, and drops them once gone", () => {
    const resident = new Set(["s1", "s2"]);
    const stored = new Set<string>();
    const advert = new PrefixAdvert({
      isResident: (_tenant, session) => resident.has(session),
      hasCheckpoint: (id) => stored.has(id),
    });
    advert.holdSession("t", "s1", chain("a", 5));
    advert.holdSession("t", "s2", chain("b", 3));
    expect(advert.list()).toEqual(["b0", "b1", "b2", "a0", "a1", "a2", "a4"]);
    // s1 is parked: its checkpoint holds what it held; then s1 leaves the table.
    stored.add("ck1");
    advert.holdCheckpoint("ck1", "t", "s1", "parked");
    resident.delete("s1");
    expect(advert.list()).toContain("a4");
    // The checkpoint is evicted: nothing of s1 is advertised any more.
    stored.delete("ck1");
    expect(advert.list()).toEqual(["b0", "b1", "b2"]);
    // A cold anchor written by s2's prefill holds only system + tools (depth 0).
    stored.add("anchor");
    advert.holdCheckpoint("anchor", "t", "", "cold-anchor", "s2");
    resident.delete("s2");
    expect(advert.list()).toEqual(["b0"]);
    expect(advert.size).toBe(1);
  });

  it("is bounded: at most `limit` hashes per report, at most `capacity` holders", () => {
    const advert = new PrefixAdvert({ isResident: () => true }, 10);
    for (let i = 0; i < 50; i++) advert.holdSession("t", `s${i}`, chain(`c${i}-`, 300));
    expect(advert.size).toBe(10);
    const listed = advert.list(25);
    expect(listed).toHaveLength(25);
    // Newest holders first.
    expect(listed[0]).toBe("c49-0");
    // 0, 1, 2, 4, …, 256 and 299: 11 depths of each of the 10 holders.
    expect(advert.list()).toHaveLength(10 * 11);
  });
});
