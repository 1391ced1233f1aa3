/**
 * Tool-frontier checkpoints off the critical path (real engine, tiny model, in process): a tool
 * result that arrives before the write starts cancels it, one that arrives while the write is still
 * making itself durable is served from the live KV without waiting for it, writes of one session
 * commit in order, and concurrent sessions writing checkpoints decode exactly what they decode alone.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CheckpointStorage } from "../../gpu-worker/checkpoints/store/checkpoint-storage.ts";
import type { CheckpointStore } from "../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { StopReason, ToolChoiceMode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId, tempDir, toolResults, userTurn, WorkerHarness } from "../support/worker-harness.ts";

/** Tool results, answered with another forced tool call (so every turn ends in `tool_use`). */
const resultsThenTool = (calls: { id: string }[], system?: string) => ({
  ...toolResults(calls, system),
  toolChoice: { mode: ToolChoiceMode.ANY, disableParallelToolUse: true },
});

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

/** Harnesses still open (a failed test must not keep the shared engine's two sequences). */
const open = new Set<WorkerHarness>();
afterEach(() => {
  for (const h of open) h.close();
  open.clear();
});

function harness(dir: string, options: ConstructorParameters<typeof WorkerHarness>[2] = {}): WorkerHarness {
  const h = new WorkerHarness(engine, dir, options);
  open.add(h);
  return h;
}

function closeHarness(h: WorkerHarness): void {
  open.delete(h);
  h.close();
}

/** A store whose writes stop after the engine's dump, before fsync and commit, until `open()`. */
function gated(store: CheckpointStore) {
  let open = () => {};
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let dumped = () => {};
  const firstDump = new Promise<void>((resolve) => {
    dumped = resolve;
  });
  let landed = 0;
  const storage: CheckpointStorage = {
    modelIdentity: store.modelIdentity,
    write: async (input, writeState) => {
      const meta = await store.write(input, async (path) => {
        await writeState(path);
        dumped();
        await gate;
      });
      landed++;
      return meta;
    },
    findLongestPrefix: (...args) => store.findLongestPrefix(...args),
    findByToolUseIds: (...args) => store.findByToolUseIds(...args),
    findBySession: (...args) => store.findBySession(...args),
    load: (...args) => store.load(...args),
    localPayload: (...args) => store.localPayload(...args),
    remove: (id) => store.remove(id),
    refresh: (...args) => store.refresh(...args),
    stats: () => store.stats(),
    close: () => store.close(),
  };
  return { storage, open, firstDump, landed: () => landed };
}

describe("tool-frontier checkpoints never hold up the session", () => {
  it("a tool result arriving before the write starts cancels it and runs live; nothing is lost", async () => {
    const dir = tempDir("frontier-defer-");
    try {
      const a = newSessionId();
      const h = harness(dir.path, { checkpointDelayMs: 60_000 });
      const first = await h.turn("t", a, userTurn("defer me"));
      expect(first.toolCalls.length).toBeGreaterThan(0);
      const second = await h.turn("t", a, resultsThenTool(first.toolCalls));
      expect(second.stop).toBe(StopReason.TOOL_USE);
      expect(second.decision).toBe("live-tool-ids");
      expect(second.promptTokens - second.cachedTokens).toBeLessThan(80);
      // The first turn's write was cancelled before it started: nothing was written for it.
      expect(h.store.stats().byReason["tool-frontier"]).toBe(0);
      // A graceful shutdown still saves the session (cancelling the second turn's scheduled write).
      expect(await h.deps.sessions.saveAll()).toBe(1);
      closeHarness(h);

      const after = harness(dir.path);
      const third = await after.turn("t", a, toolResults(second.toolCalls), 6);
      expect(third.decision).toBe("live-tool-ids");
      closeHarness(after);
    } finally {
      dir.remove();
    }
  });

  it("a tool result arriving while the write is being made durable is served live before it lands", async () => {
    const dir = tempDir("frontier-during-");
    try {
      const a = newSessionId();
      let gate: ReturnType<typeof gated> | undefined;
      const h = harness(dir.path, {
        wrapStorage: (store) => {
          gate = gated(store);
          return gate.storage;
        },
      });
      if (!gate) throw new Error("no storage");
      const first = await h.turn("t", a, userTurn("write me"));
      // The engine has dumped the KV; fsync, checksum and commit are held at the gate.
      await gate.firstDump;
      const second = h.turn("t", a, resultsThenTool(first.toolCalls));
      // If the turn waited for the write, the gate would only open on this fallback and the write
      // would land first (a hang guard, not a timing assertion).
      const fallback = setTimeout(() => gate?.open(), 15_000);
      const winner = await Promise.race([second.then(() => "turn"), gateLanded(gate).then(() => "write")]);
      expect(winner).toBe("turn");
      expect(gate.landed()).toBe(0);
      expect((await second).decision).toBe("live-tool-ids");
      expect((await second).stop).toBe(StopReason.TOOL_USE);
      gate.open();
      clearTimeout(fallback);
      await h.settle();
      // Both writes landed, in order: the newest checkpoint holds the second turn's frontier.
      expect(gate.landed()).toBe(2);
      expect(h.store.stats().byReason["tool-frontier"]).toBe(1);
      closeHarness(h);

      const after = harness(dir.path);
      const third = await after.turn("t", a, toolResults((await second).toolCalls), 6);
      expect(third.decision).toBe("live-tool-ids");
      expect(third.cachedTokens).toBeGreaterThan(first.promptTokens);
      closeHarness(after);
    } finally {
      dir.remove();
    }
  });

  it("a cold first turn waits for its anchor's KV dump only, not for the write to be made durable", async () => {
    const dir = tempDir("frontier-anchor-");
    try {
      const system = "Shared system prompt. ".repeat(40);
      let gate: ReturnType<typeof gated> | undefined;
      const h = harness(dir.path, {
        anchorMinTokens: 64,
        wrapStorage: (store) => {
          gate = gated(store);
          return gate.storage;
        },
      });
      if (!gate) throw new Error("no storage");
      const first = h.turn("t", newSessionId(), userTurn("anchor me", system));
      // The anchor's fsync, index commit (and replica upload) are held at the gate; the hang guard
      // opens it only if the turn waits for them.
      const fallback = setTimeout(() => gate?.open(), 15_000);
      const winner = await Promise.race([first.then(() => "turn"), gateLanded(gate).then(() => "write")]);
      expect(winner).toBe("turn");
      expect((await first).decision).toBe("cold");
      expect((await first).stop).toBe(StopReason.TOOL_USE);
      expect(gate.landed()).toBe(0);
      expect(h.store.stats().byReason["cold-anchor"]).toBe(0);
      gate.open();
      clearTimeout(fallback);
      await h.settle();
      // The anchor and the turn's tool-frontier checkpoint (also written in the background).
      expect(gate.landed()).toBe(2);
      expect(h.store.stats().byReason["cold-anchor"]).toBe(1);
      // The next conversation with the same system + tools starts from it.
      const second = await h.turn("t", newSessionId(), userTurn("from the anchor", system));
      expect(second.decision).toBe("checkpoint");
      closeHarness(h);
    } finally {
      dir.remove();
    }
  });

  it("a tool-frontier checkpoint stores only the cells past the anchor; a restore assembles them and continues exactly", async () => {
    const dir = tempDir("frontier-share-");
    try {
      const system = "Shared system prompt. ".repeat(40);
      const h = harness(dir.path, { anchorMinTokens: 64 });
      // Reference: a session that continues live.
      const ref = newSessionId();
      const refFirst = await h.turn("t", ref, userTurn("share", system));
      const refSecond = await h.turn("t", ref, resultsThenTool(refFirst.toolCalls, system));
      await h.settle();
      h.deps.sessions.drop("t", ref);

      const a = newSessionId();
      const first = await h.turn("t", a, userTurn("share", system));
      expect(first.decision).toBe("checkpoint");
      await h.settle();
      const stored = h.store.findBySession("t", a);
      // The session's checkpoint extends the anchor: its chunk holds only the turn's cells.
      expect(stored?.reason).toBe("tool-frontier");
      expect(stored?.chain.length).toBe(1);
      expect(stored?.bytes).toBeLessThan((h.store.stats().bytes - (stored?.bytes ?? 0)) / 4);
      closeHarness(h);

      const after = harness(dir.path);
      const second = await after.turn("t", a, resultsThenTool(first.toolCalls, system));
      expect(second.decision).toBe("live-tool-ids");
      // Exact: the restored KV holds every token, so only the new suffix is prefilled, as live.
      expect(second.promptTokens - second.cachedTokens).toBe(refSecond.promptTokens - refSecond.cachedTokens);
      expect(second.toolCalls.map((c) => c.argumentsJson)).toEqual(refSecond.toolCalls.map((c) => c.argumentsJson));
      closeHarness(after);
    } finally {
      dir.remove();
    }
  });

  it("sessions writing checkpoints while others decode (and park) produce what they produce alone", async () => {
    const dir = tempDir("frontier-busy-");
    try {
      const loop = async (h: WorkerHarness, word: string) => {
        const id = newSessionId();
        const out: string[] = [];
        let turn = await h.turn("t", id, userTurn(word));
        out.push(turn.toolCalls.map((c) => c.argumentsJson).join());
        for (let i = 0; i < 2; i++) {
          turn = await h.turn("t", id, resultsThenTool(turn.toolCalls));
          out.push(`${turn.decision}:${turn.text}${turn.toolCalls.map((c) => c.argumentsJson).join()}`);
        }
        return out;
      };
      const words = ["amber", "birch", "cedar", "dune"];
      const alone: string[][] = [];
      for (const word of words) {
        const h = harness(dir.path);
        alone.push(await loop(h, word));
        await h.settle();
        closeHarness(h);
      }
      const h = harness(dir.path);
      const together = await Promise.all(words.map((word) => loop(h, word)));
      await h.settle();
      closeHarness(h);
      expect(together).toEqual(alone);
    } finally {
      dir.remove();
    }
  });
});

/** Resolves when the gated store has committed its first write. */
async function gateLanded(gate: ReturnType<typeof gated>): Promise<void> {
  while (gate.landed() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}
