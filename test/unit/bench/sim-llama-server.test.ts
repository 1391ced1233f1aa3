import { describe, expect, it } from "vitest";
import { MEASURED_TINY_CPU } from "../../../bench/sim/cost-model.ts";
import { simulateLlamaServer } from "../../../bench/sim/llama-server-sim.ts";
import { commonTokens, LlamaServerSlots, promptKv } from "../../../bench/sim/llama-server-slots.ts";
import { simulate } from "../../../bench/sim/pool-sim.ts";
import { DEFAULT_CAPACITY } from "../../../bench/sim/sim-workload.ts";
import { deriveSessions, type SimRequest } from "../../../bench/sim/trace-sessions.ts";
import { parseTrace } from "../../../bench/trace/trace-file.ts";

// llama-server's slots and host prompt cache in the simulator, on hand-made traces of 512-token blocks.
const line = (timestamp: number, input: number, output: number, ids: number[]) =>
  JSON.stringify({ timestamp, input_length: input, output_length: output, hash_ids: ids });

const requestsOf = (...lines: string[]): SimRequest[] => deriveSessions(parseTrace(lines.join("\n")));
const req = (requests: SimRequest[], i: number): SimRequest => {
  const r = requests[i];
  if (!r) throw new Error(`no request ${i}`);
  return r;
};
/** Serve `r` on `server` (assign a slot, hold its prompt + output), returning the assignment. */
const serve = (server: LlamaServerSlots, r: SimRequest, now: number) => {
  const a = server.assign(r);
  server.release(a.slot, { ...promptKv(r), tokens: r.inputLength + r.outputLength }, now);
  return a;
};

describe("llama-server slots", () => {
  // A: 8 blocks; A2 continues it; C another conversation sharing only the system block; B shares nothing.
  const trace = requestsOf(
    line(0, 4096, 100, [0, 1, 2, 3, 4, 5, 6, 7]),
    line(1, 2048, 50, [99, 21, 22, 23]),
    line(2, 5120, 50, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
    line(3, 1024, 50, [0, 31]),
    line(4, 4608, 50, [0, 1, 2, 3, 4, 5, 6, 7, 41]),
  );
  const [A, B, A2, C, Abranch] = [0, 1, 2, 3, 4].map((i) => req(trace, i));
  if (!A || !B || !A2 || !C || !Abranch) throw new Error("five requests");

  it("a follow-up takes the slot holding its conversation (longest common prefix), with the previous output", () => {
    const server = new LlamaServerSlots(2, 1_000_000);
    // Never-used slots go by LRU, ties to the later slot: A in slot 1, B in slot 0.
    expect(serve(server, A, 10).slot.index).toBe(1);
    expect(serve(server, B, 20)).toMatchObject({ by: "lru", slot: { index: 0 } });
    const a = server.assign(A2);
    expect(a.by).toBe("prefix");
    expect(a.slot.index).toBe(1);
    expect(a.reusedBlocks).toBe(4096);
    expect(a.reusedWithOutput).toBe(4096 + 100);
    expect(a.savedTokens).toBe(0);
  });

  it("a slot that keeps under half its tokens saves its prompt to the host cache first, whence a later request loads it", () => {
    const server = new LlamaServerSlots(1, 1_000_000);
    serve(server, A, 10);
    // C shares 512 of 1,024 tokens with A's slot (0.5 > 0.1): chosen by prefix, but it keeps under
    // half of A's tokens, so A's prompt goes to the host cache first.
    const c = serve(server, C, 20);
    expect(c.by).toBe("prefix");
    expect(c.savedTokens).toBe(4196);
    expect(server.cache.map((kv) => kv.tokens)).toEqual([4196]);
    // A branch of A (shares A's 8 blocks): the slot holds C; the cached A beats it and is loaded.
    const branch = server.assign(Abranch);
    expect(branch.loadedTokens).toBe(4196);
    expect(branch.reusedBlocks).toBe(4096);
    expect(server.cache.map((kv) => kv.tokens)).toEqual([1074]);
  });

  it("the host cache drops its oldest prompts past its budget, keeping one", () => {
    const server = new LlamaServerSlots(1, 3000);
    serve(server, A, 10);
    serve(server, B, 20);
    expect(server.cache.map((kv) => kv.tokens)).toEqual([4196]);
    serve(server, C, 30);
    // A (4,196) then B (2,098) were saved; over 3,000 tokens A went, and B stays.
    expect(server.cache.map((kv) => kv.tokens)).toEqual([2098]);
    const alone = new LlamaServerSlots(1, 10);
    serve(alone, A, 10);
    serve(alone, B, 20);
    expect(alone.cache.map((kv) => kv.tokens)).toEqual([4196]);
  });

  it("states share whole blocks, or all of one when the other continues it", () => {
    expect(commonTokens(promptKv(A), promptKv(A2))).toBe(4096);
    expect(commonTokens(promptKv(A), promptKv(C))).toBe(512);
    expect(commonTokens(promptKv(A), promptKv(B))).toBe(0);
    expect(commonTokens({ ...promptKv(A), tokens: 4196 }, promptKv(A2))).toBe(4196);
  });
});

describe("llama-server beside Frontier on one trace", () => {
  // Conversation A (2 turns), then B, a new conversation sharing A's first 4 blocks, while A's slot is idle.
  const trace = requestsOf(
    line(0, 2560, 20, [0, 101, 102, 103, 104]),
    line(60_000, 3072, 20, [0, 101, 102, 103, 104, 105]),
    line(120_000, 3072, 20, [0, 101, 102, 103, 201, 202]),
  );

  it("both reuse the conversation's own KV and the shared blocks; the counts are side by side", () => {
    const capacity = { ...DEFAULT_CAPACITY, sequences: 2 };
    const llama = simulateLlamaServer(trace, { servers: 1, capacity, cost: MEASURED_TINY_CPU });
    const frontier = simulate(trace, {
      workers: 1,
      policy: "frontier",
      capacity,
      cost: MEASURED_TINY_CPU,
      heartbeatMs: 2000,
    });
    expect(llama.served).toBe(3);
    expect(llama.slotsByPrefix).toBe(2);
    // A2 reuses A's 5 blocks, B the 4 it shares with A2 (in A's slot).
    expect(llama.reusedTokens).toBe(2560 + 2048);
    expect(frontier.reusedTokens).toBe(llama.reusedTokens);
    expect(frontier.prefilledTokens).toBe(llama.prefilledTokens);
    expect(llama.ttftMs).toHaveLength(3);
  });

  it("follow-ups stay on their conversation's server; new conversations take turns", () => {
    const result = simulateLlamaServer(trace, {
      servers: 2,
      capacity: DEFAULT_CAPACITY,
      cost: MEASURED_TINY_CPU,
    });
    // A and its follow-up on server 0, B (a new conversation) on server 1: nothing shared there.
    expect(result.perWorkerRequests).toEqual([2, 1]);
    expect(result.reusedTokens).toBe(2560);
  });

  it("refuses past the queue bound, as the Frontier worker does", () => {
    const burst = requestsOf(...[0, 1, 2, 3].map((t) => line(t, 2048, 500, [0, 10 * t + 1, 10 * t + 2, 10 * t + 3])));
    const result = simulateLlamaServer(burst, {
      servers: 1,
      capacity: { ...DEFAULT_CAPACITY, sequences: 1, maxQueue: 1 },
      cost: MEASURED_TINY_CPU,
    });
    expect(result.served).toBe(2);
    expect(result.refused).toBe(2);
  });
});
