import { describe, expect, it } from "vitest";
import { MEASURED_TINY_CPU } from "../../../bench/sim/cost-model.ts";
import { simulate } from "../../../bench/sim/pool-sim.ts";
import { DEFAULT_CAPACITY } from "../../../bench/sim/sim-workload.ts";
import { deriveSessions, requestChain } from "../../../bench/sim/trace-sessions.ts";
import { parseTrace } from "../../../bench/trace/trace-file.ts";

// The simulated worker's shared-prefix rung and placement by prefix chain, on hand-made traces of
// 512-token blocks: block 0 is the system prompt every request shares; 1xx, 2xx… are conversations.
const line = (timestamp: number, input: number, output: number, ids: number[]) =>
  JSON.stringify({ timestamp, input_length: input, output_length: output, hash_ids: ids });

const A = line(0, 2560, 20, [0, 101, 102, 103, 104]);
// B's first turn shares A's first 4 blocks (2,048 tokens), then its own task.
const B = (at: number) => line(at, 3072, 20, [0, 101, 102, 103, 201, 202]);

const run = (lines: string[], workers = 1, capacity = DEFAULT_CAPACITY) =>
  simulate(deriveSessions(parseTrace(lines.join("\n"))), {
    workers,
    policy: "frontier",
    capacity,
    cost: MEASURED_TINY_CPU,
    heartbeatMs: 2000,
  });

describe("simulated shared-prefix rung", () => {
  it("a new conversation copies the blocks it shares with another conversation's resident sequence", () => {
    const requests = deriveSessions(parseTrace([A, B(60_000)].join("\n")));
    expect(requests.map((r) => r.parent)).toEqual([-1, -1]);
    const result = run([A, B(60_000)]);
    expect(result.sharedFromLive).toBe(1);
    expect(result.sharedTokens).toBe(2048);
    // A prefilled everything; B only its own two blocks.
    expect(result.reusedTokens).toBe(2048);
    expect(result.prefilledTokens).toBe(2560 + 1024);
  });

  it("copies from a parked session's checkpoint, loading it whole, when the holder lost its sequence", () => {
    // One sequence: C takes it, parking A (its checkpoint holds A's blocks); B then finds A only on disk.
    const C = line(30_000, 1024, 20, [0, 301]);
    const oneSequence = { ...DEFAULT_CAPACITY, sequences: 1 };
    const result = run([A, C, B(60_000)], 1, oneSequence);
    expect(result.parks).toBeGreaterThanOrEqual(1);
    expect(result.sharedFromLive).toBe(0);
    expect(result.sharedFromCheckpoint).toBe(1);
    expect(result.sharedTokens).toBe(2048);
  });

  it("finds A's blocks no more once its checkpoint is evicted (the capacity model decides what is held)", () => {
    const C = line(30_000, 1024, 20, [0, 301]);
    const roomy = run([A, C, B(60_000)], 1, { ...DEFAULT_CAPACITY, sequences: 1 });
    // Room for C's parked checkpoint or A's, not both: parking C for B evicts A's (the cold anchor
    // went when A was parked), so B finds only the system block, in C's checkpoint.
    const tight = run([A, C, B(60_000)], 1, { ...DEFAULT_CAPACITY, sequences: 1, checkpointTokens: 3000 });
    expect(tight.evictions).toBe(2);
    // C's first turn and B's each load a parked checkpoint and keep its system block.
    expect(roomy.sharedTokens).toBe(2048);
    expect(roomy.reusedTokens).toBe(512 + 2048);
    expect(tight.sharedFromCheckpoint).toBe(2);
    expect(tight.sharedTokens).toBe(512 + 512);
    expect(tight.reusedTokens).toBe(512 + 512);
  });

  it("needs a block more than the cold anchor gives: sharing only the system block copies nothing", () => {
    const other = line(60_000, 2048, 20, [0, 401, 402, 403]);
    const result = run([A, other]);
    expect(result.sharedFromLive + result.sharedFromCheckpoint).toBe(0);
    expect(result.storedPrefixHits).toBe(1);
    expect(result.reusedTokens).toBe(512);
  });
});

describe("simulated placement by prefix chain", () => {
  it("the request's chain is the system fingerprint then one key per further full block", () => {
    const [r] = deriveSessions(parseTrace(line(0, 2600, 1, [0, 1, 2, 3, 4, 5])));
    if (!r) throw new Error("one request");
    expect(requestChain(r)).toEqual([r.fingerprint, ...r.prefixKeys.slice(1, 5)]);
  });

  it("a new conversation goes to the worker holding the most of its prefix, not the first holder of its system block", () => {
    // One sequence per worker: D lands on w0, A on w1 (w0 cannot start another at once); both finish.
    // B shares A's blocks: by the fingerprint alone both workers hold it equally deep and w0 (first by
    // id) wins; by the chain w1 holds 3 more blocks.
    const D = line(0, 1536, 20, [0, 501, 502]);
    const A1 = line(100, 2560, 20, [0, 101, 102, 103, 104]);
    const result = run([D, A1, B(60_000)], 2, { ...DEFAULT_CAPACITY, sequences: 1 });
    expect(result.perWorkerRequests).toEqual([1, 2]);
    expect(result.placedByPrefix).toBe(1);
    // B's sequence is A's (parked for it), so the copy comes from A's checkpoint.
    expect(result.sharedFromLive + result.sharedFromCheckpoint).toBe(1);
    expect(result.sharedTokens).toBe(2048);
  });
});
