/**
 * The ladder's shared-prefix and public-prefix rungs (real engine, tiny model, in process): a new
 * conversation of a tenant copies the longest prefix another of its conversations holds — live or
 * checkpointed — and samples exactly as a cold prefill; another tenant's identical text finds
 * nothing unless it is a registered public prefix; an index entry whose KV changed or was evicted
 * is never used.
 */

import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChatMlFormat } from "../../gpu-worker/chat/families/qwen/chatml.ts";
import { publicPrefixHash } from "../../gpu-worker/continuation/shared-prefix/public-prefixes.ts";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { ConversationSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { testDataKey } from "../support/test-data-key.ts";
import { newSessionId, tempDir, userTurn, WorkerHarness } from "../support/worker-harness.ts";

let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({
    modelPath: await ensureTestModel("tiny"),
    contextSize: 4096,
    sequences: 3,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 256,
  });
});

afterAll(async () => {
  await engine?.dispose();
});

type HarnessOptions = ConstructorParameters<typeof WorkerHarness>[2];

async function withHarness<T>(fn: (h: WorkerHarness) => Promise<T>, options: HarnessOptions = {}): Promise<T> {
  const dir = tempDir("frontier-shared-prefix-");
  const h = new WorkerHarness(engine, dir.path, { sharedPrefix: { blockTokens: 64, minTokens: 64 }, ...options });
  try {
    return await fn(h);
  } finally {
    h.close();
    dir.remove();
  }
}

const SYSTEM = "You are the team's coding agent. Follow the project's conventions. ".repeat(6);
/** Project instructions every conversation of the team starts with; only the last line differs. */
const CONTEXT = "Project notes: the build uses make; tests live in test/; keep functions small. ".repeat(8);
const task = (what: string) => userTurn(`${CONTEXT}\nTask: ${what}`, SYSTEM);

describe("shared prefixes within a tenant", () => {
  it("a second conversation copies the first one's live prefix and samples as a cold prefill does", async () => {
    const reference = await withHarness((h) => h.turn("t", newSessionId(), task("rename the helper"), 16), {
      sharedPrefix: false,
    });
    expect(reference.decision).toBe("cold");
    await withHarness(async (h) => {
      const first = await h.turn("t", newSessionId(), task("fix the flaky test"), 8);
      expect(first.decision).toBe("cold");
      const b = newSessionId();
      const second = await h.turn("t", b, task("rename the helper"), 16);
      expect(second.decision).toBe("shared-prefix");
      expect(second.missReason).toBe("no-live-state");
      // Everything up to the task's last line: system, tools and the shared notes.
      expect(second.cachedTokens).toBeGreaterThan(CONTEXT.length);
      expect(second.promptTokens).toBe(reference.promptTokens);
      expect(second.text).toBe(reference.text);
      expect(second.toolCalls.map((c) => [c.name, c.argumentsJson])).toEqual(
        reference.toolCalls.map((c) => [c.name, c.argumentsJson]),
      );
    });
  });

  it("another tenant's identical text finds nothing", async () => {
    await withHarness(async (h) => {
      const a = newSessionId();
      await h.turn("tenant-a", a, task("one"), 4);
      const other = await h.turn("tenant-b", newSessionId(), task("two"), 4);
      expect(other.decision).toBe("cold");
      expect(other.missReason).toBe("no-live-state");
      expect(other.cachedTokens).toBe(0);
      // The index holds tenant-a's blocks; tenant-b's keyed chain of the very same tokens matches none.
      const tokens = await h.kvTokens("tenant-a", a);
      const shared = h.deps.shared;
      if (!shared) throw new Error("shared prefixes are off");
      expect(shared.index.lookup(shared.chain(testDataKey("tenant-a"), tokens))?.refs).toContainEqual(
        expect.objectContaining({ kind: "live", tenant: "tenant-a", sessionId: a }),
      );
      const forB = shared.index.lookup(shared.chain(testDataKey("tenant-b"), tokens));
      expect(forB?.refs.filter((r) => r.tenant === "tenant-a") ?? []).toEqual([]);
    });
  });

  it("copies from a parked conversation's checkpoint when its live state is gone", async () => {
    await withHarness(
      async (h) => {
        const a = newSessionId();
        await h.turn("t", a, task("first"), 8);
        await h.settle();
        // Fill the other sequences so that A is parked (its checkpoint stays).
        await h.turn("t", newSessionId(), userTurn("unrelated one"), 4);
        await h.turn("t", newSessionId(), userTurn("unrelated two"), 4);
        await h.turn("t", newSessionId(), userTurn("unrelated three"), 4);
        await h.settle();
        expect(h.deps.sessions.isResident("t", a)).toBe(false);
        const b = await h.turn("t", newSessionId(), task("second"), 4);
        expect(b.decision).toBe("shared-prefix");
        expect(b.cachedTokens).toBeGreaterThan(CONTEXT.length);
      },
      { checkpointDelayMs: 0 },
    );
  });

  it("never uses an index entry whose live KV changed since: checked token for token, then dropped", async () => {
    await withHarness(async (h) => {
      const a = newSessionId();
      await h.turn("t", a, task("first"), 8);
      // A's KV changes without a finished turn to re-index it (as a cancelled turn leaves it): as
      // long as before, other tokens from the 11th on.
      const leased = await h.deps.sessions.lease("t", a);
      const length = leased.sequence.tokens.length;
      await leased.sequence.truncate(10);
      await leased.sequence.append(Array.from({ length: length - 10 }, (_, i) => 100 + (i % 50)));
      h.deps.sessions.release(leased);
      const b = await h.turn("t", newSessionId(), task("second"), 4);
      expect(b.decision).toBe("cold");
      expect(b.missReason).toBe("prefix-stale");
      expect(h.deps.shared?.index.stats().holders).toBe(1); // B's own, after its turn; A's was dropped
    });
  });

  it("never uses an index entry whose KV was evicted: a clean miss", async () => {
    await withHarness(
      async (h) => {
        const a = newSessionId();
        await h.turn("t", a, task("first"), 8);
        await h.settle();
        // Enough other conversations that several are parked: their checkpoints take the budget.
        for (const n of [1, 2, 3, 4, 5, 6]) await h.turn("t", newSessionId(), userTurn(`unrelated ${n}`), 4);
        await h.settle();
        expect(h.deps.sessions.isResident("t", a)).toBe(false);
        // The budget (this tenant's share of it) evicted A's checkpoint, the oldest; the index still lists it.
        const evictions = h.store.stats().evictions ?? {};
        expect((evictions.budget ?? 0) + (evictions["tenant-share"] ?? 0)).toBeGreaterThan(0);
        expect(h.store.findBySession("t", a)).toBeUndefined();
        const bSession = newSessionId();
        const b = await h.turn("t", bSession, task("second"), 4);
        // A clean cold miss: the entry is dropped (a gone holder is no miss of the index: the live
        // state's own reason stands).
        expect(b.decision).toBe("cold");
        expect(b.missReason).toBe("no-live-state");
        expect(b.cachedTokens).toBe(0);
        // A's entry is gone from the index; B's own KV is there now.
        const shared = h.deps.shared;
        const holders = shared?.index.lookup(shared.chain(testDataKey("t"), await h.kvTokens("t", bSession)))?.refs;
        expect(holders?.map((r) => (r.kind === "live" ? r.sessionId : r.meta.sessionId))).toEqual([bSession]);
      },
      // Room for about one checkpoint of A's size: the later sessions' checkpoints push it out.
      { checkpointDelayMs: 0, budgetBytes: 450_000 },
    );
  });
});

describe("public prefixes", () => {
  it("a registered public prefix is restored for another tenant's first turn; unregistered text is not", async () => {
    // The rendered header (system + tools) of this client "version": the operator registers it by hash.
    const header = renderedHeader(task("x"));
    const publicPrefixes = [{ name: "team-client", sha256: publicPrefixHash(header), chars: header.length }];
    await withHarness(
      async (h) => {
        const first = await h.turn("tenant-a", newSessionId(), task("one"), 4);
        expect(first.decision).toBe("cold");
        expect(h.deps.shared?.publicStates.stats().states).toBe(1);
        const other = await h.turn("tenant-b", newSessionId(), task("two"), 4);
        expect(other.decision).toBe("public-prefix");
        expect(other.cachedTokens).toBeGreaterThan(SYSTEM.length / 2);
        // A byte changed in the system prompt: not the registered content, nothing shared.
        const edited = await h.turn(
          "tenant-c",
          newSessionId(),
          userTurn(`${CONTEXT}\nTask: three`, `${SYSTEM.slice(0, -1)}!`),
          4,
        );
        expect(edited.decision).toBe("cold");
      },
      { sharedPrefix: { blockTokens: 64, minTokens: 64, publicPrefixes } },
    );
  });
});

describe("public prefix and cold anchor at one save point", () => {
  it("a cold prefill saves both at the end of system + tools; another tenant restores the public one and samples as cold", async () => {
    const reference = await withHarness((h) => h.turn("tenant-b", newSessionId(), task("two"), 16), {
      sharedPrefix: false,
    });
    expect(reference.decision).toBe("cold");
    // Registered as an operator registers a client version: its whole header, where the tenant's anchor also goes.
    const header = renderedHeader(task("x"));
    const publicPrefixes = [{ name: "team-client", sha256: publicPrefixHash(header), chars: header.length }];
    await withHarness(
      async (h) => {
        const first = await h.turn("tenant-a", newSessionId(), task("one"), 4);
        expect(first.decision).toBe("cold");
        await h.settle();
        const anchor = h.deps.checkpoints?.store.findLongestPrefix(testDataKey("tenant-a"), header);
        expect(anchor?.reason).toBe("cold-anchor");
        const state = h.deps.shared?.publicPrefixes.entries[0];
        const saved = state && h.deps.shared?.publicStates.get(state);
        expect(saved?.tokens.length).toBe(anchor?.tokenCount);
        const other = await h.turn("tenant-b", newSessionId(), task("two"), 16);
        expect(other.decision).toBe("public-prefix");
        expect(other.cachedTokens).toBe(anchor?.tokenCount);
        expect(other.promptTokens).toBe(reference.promptTokens);
        expect(other.text).toBe(reference.text);
        expect(other.toolCalls.map((c) => [c.name, c.argumentsJson])).toEqual(
          reference.toolCalls.map((c) => [c.name, c.argumentsJson]),
        );
      },
      { anchorMinTokens: 1, sharedPrefix: { blockTokens: 64, minTokens: 64, publicPrefixes } },
    );
  });
});

/** The rendered system + tools of a conversation (what an operator registers for a client version). */
function renderedHeader(conversation: MessageInitShape<typeof ConversationSchema>): string {
  const rendered = new ChatMlFormat().render(create(ConversationSchema, conversation));
  return rendered.text.slice(0, rendered.messageOffsets[0]);
}
