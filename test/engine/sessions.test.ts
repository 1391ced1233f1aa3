/**
 * Many sessions on one worker (real engine, tiny model, in process): parking by value to disk
 * checkpoints and restoring, a bounded wait for sequences, anchors, restarts, corruption and
 * tenant isolation.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { newSessionId, tempDir, toolResults, userTurn, WorkerHarness } from "../support/worker-harness.ts";

let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 4096,
    sequences: 2,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 256,
  });
});

afterAll(async () => {
  await engine?.dispose();
});

async function withHarness<T>(fn: (h: WorkerHarness, dir: string) => Promise<T>, options = {}): Promise<T> {
  const dir = tempDir("frontier-sessions-");
  const harness = new WorkerHarness(engine, dir.path, options);
  try {
    return await fn(harness, dir.path);
  } finally {
    harness.close();
    dir.remove();
  }
}

describe("sessions on a 2-sequence worker", () => {
  it("parks the least valuable session and restores it: a suffix-only live match, same greedy output", async () => {
    await withHarness(async (h) => {
      // Reference: the same conversation, never parked.
      const ref = newSessionId();
      const refFirst = await h.turn("t", ref, userTurn("alpha"));
      const refSecond = await h.turn("t", ref, toolResults(refFirst.toolCalls), 12);
      expect(refSecond.decision).toBe("live-tool-ids");
      h.deps.sessions.drop("t", ref);

      const a = newSessionId();
      const first = await h.turn("t", a, userTurn("alpha"));
      expect(first.toolCalls.map((c) => c.argumentsJson)).toEqual(refFirst.toolCalls.map((c) => c.argumentsJson));
      await h.settle();
      // Two more sessions waiting on tool results: the oldest of equal value (a) is parked.
      await h.turn("t", newSessionId(), userTurn("beta"));
      await h.settle();
      await h.turn("t", newSessionId(), userTurn("gamma"));
      await h.settle();
      expect(h.deps.sessions.stats().parked).toBeGreaterThanOrEqual(1);

      const second = await h.turn("t", a, toolResults(first.toolCalls), 12);
      expect(second.decision).toBe("live-tool-ids");
      expect(second.promptTokens - second.cachedTokens).toBe(refSecond.promptTokens - refSecond.cachedTokens);
      expect(second.text).toBe(refSecond.text);
    });
  });

  it("parks an ended session before one waiting on tool results", async () => {
    await withHarness(async (h) => {
      const waiting = newSessionId();
      await h.turn("t", waiting, userTurn("one"));
      await h.settle();
      const ended = newSessionId();
      await h.turn("t", ended, { ...userTurn("two"), toolChoice: undefined, tools: [] }, 4);
      await h.turn("t", newSessionId(), userTurn("three"));
      await h.settle();
      expect(h.deps.sessions.stats().parked).toBe(1);
      expect(h.deps.sessions.isResident("t", waiting)).toBe(true);
      expect(h.deps.sessions.isResident("t", ended)).toBe(false);
    });
  });

  it("evaluates each new prompt token once: the last goes to the first sampling decode", async () => {
    const fed = { appended: 0, promptEnd: [] as number[] };
    const bound = <T extends object>(target: T, overrides: Partial<T>): T =>
      new Proxy(target, {
        get: (t, key) => {
          if (key in overrides) return overrides[key as keyof T];
          const value = Reflect.get(t, key, t);
          return typeof value === "function" ? value.bind(t) : value;
        },
      });
    const counting = bound(engine, {
      acquireSequence: async (...args: Parameters<Engine["acquireSequence"]>) => {
        const sequence = await engine.acquireSequence(...args);
        return bound(sequence, {
          append: (tokens, options) => {
            fed.appended += tokens.length;
            return sequence.append(tokens, options);
          },
          generate: (options) => {
            fed.promptEnd.push(options.promptEnd?.length ?? 0);
            return sequence.generate(options);
          },
        });
      },
    });
    const dir = tempDir("frontier-sessions-");
    const h = new WorkerHarness(counting, dir.path);
    try {
      const id = newSessionId();
      const first = await h.turn("t", id, userTurn("alpha"));
      expect(fed).toEqual({ appended: first.promptTokens - 1, promptEnd: [1] });
      fed.appended = 0;
      const second = await h.turn("t", id, toolResults(first.toolCalls), 12);
      expect(second.decision).toBe("live-tool-ids");
      expect(fed).toEqual({ appended: second.promptTokens - second.cachedTokens - 1, promptEnd: [1, 1] });
    } finally {
      h.close();
      dir.remove();
    }
  });

  it("runs 8 concurrent sessions on 2 sequences, each with the output it has alone", async () => {
    await withHarness(async (h) => {
      const prompts = ["red", "green", "blue", "gold", "cyan", "pink", "gray", "teal"];
      const alone: string[] = [];
      for (const p of prompts) {
        const id = newSessionId();
        alone.push((await h.turn("t", id, { ...userTurn(p), toolChoice: undefined, tools: [] }, 6)).text);
        h.deps.sessions.drop("t", id);
      }
      const together = await Promise.all(
        prompts.map((p) => h.turn("t", newSessionId(), { ...userTurn(p), toolChoice: undefined, tools: [] }, 6)),
      );
      expect(together.map((t) => t.text)).toEqual(alone);
    });
  });

  it("answers OVERLOADED past the queue bound", async () => {
    await withHarness(
      async (h) => {
        const runs = ["a", "b", "c", "d"].map((p) =>
          h.turn("t", newSessionId(), { ...userTurn(p), toolChoice: undefined, tools: [] }, 40).then(
            () => "ok",
            (e: Error) => e.message,
          ),
        );
        const results = await Promise.all(runs);
        expect(results.filter((r) => r === "ok").length).toBe(3);
        expect(results.find((r) => r !== "ok")).toMatch(/queue is full/);
      },
      { maxQueue: 1 },
    );
  });
});

describe("checkpoints", () => {
  it("survive a worker restart: a tool-results-only request continues from the tool-frontier checkpoint", async () => {
    const dir = tempDir("frontier-restart-");
    try {
      const a = newSessionId();
      const before = new WorkerHarness(engine, dir.path);
      const first = await before.turn("t", a, userTurn("restart me"));
      await before.settle();
      const ended = newSessionId();
      await before.turn("t", ended, { ...userTurn("plain"), toolChoice: undefined, tools: [] }, 4);
      // Graceful shutdown checkpoints resident sessions that have no checkpoint yet.
      expect(await before.deps.sessions.saveAll()).toBeGreaterThanOrEqual(1);
      before.close();

      const after = new WorkerHarness(engine, dir.path);
      const second = await after.turn("t", a, toolResults(first.toolCalls), 6);
      expect(second.decision).toBe("live-tool-ids");
      expect(second.cachedTokens).toBeGreaterThan(20);
      expect(second.promptTokens - second.cachedTokens).toBeLessThan(first.toolCalls.length > 0 ? 80 : 0);
      after.close();
    } finally {
      dir.remove();
    }
  });

  it("rejects a corrupted checkpoint, removes it, and still serves the request", async () => {
    await withHarness(async (h, dir) => {
      const a = newSessionId();
      const first = await h.turn("t", a, userTurn("corrupt me"));
      await h.settle();
      // Park a by filling both sequences with newer sessions, then damage every stored file.
      await h.turn("t", newSessionId(), userTurn("x"));
      await h.settle();
      await h.turn("t", newSessionId(), userTurn("y"));
      await h.settle();
      expect(h.deps.sessions.isResident("t", a)).toBe(false);
      const stored = h.store.stats().count;
      for (const file of readdirSync(join(dir, "files"))) writeFileSync(join(dir, "files", file), "garbage");
      const replay = {
        ...userTurn("corrupt me"),
        messages: [
          ...userTurn("corrupt me").messages,
          {
            role: 2,
            content: first.toolCalls.map((c) => ({
              block: { case: "toolUse" as const, value: { id: c.id, name: c.name, inputJson: c.argumentsJson } },
            })),
          },
          ...toolResults(first.toolCalls).messages,
        ],
      };
      const second = await h.turn("t", a, replay, 4);
      // Nothing of the damaged checkpoints: a cold prefill, or the system + tools a live sibling holds.
      expect(["cold", "shared-prefix"]).toContain(second.decision);
      expect(second.cachedTokens).toBeLessThan(first.promptTokens);
      expect(second.stop).toBeGreaterThan(0);
      expect(h.store.stats().count).toBeLessThan(stored);
    });
  });

  it("saves an anchor on a long cold prefill and reuses it only within the tenant", async () => {
    await withHarness(
      async (h) => {
        const system = "Shared system prompt. ".repeat(40);
        const first = await h.turn("tenant-a", newSessionId(), userTurn("first", system), 2);
        expect(first.decision).toBe("cold");
        await h.settle(); // the anchor lands off the turn's path
        expect(h.store.stats().byReason["cold-anchor"]).toBe(1);
        const other = await h.turn("tenant-b", newSessionId(), userTurn("second", system), 2);
        expect(other.decision).toBe("cold");
        const same = await h.turn("tenant-a", newSessionId(), userTurn("third", system), 2);
        expect(same.decision).toBe("checkpoint");
        expect(same.cachedTokens).toBeGreaterThan(100);
      },
      { anchorMinTokens: 64 },
    );
  });
});
