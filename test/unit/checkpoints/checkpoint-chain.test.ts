/**
 * Checkpoints that extend a stored prefix (a chain of KV chunks): each stores only the cells it adds,
 * loads the exact whole state, the store's byte count matches the disk (a chunk counted once, also
 * once its writer is gone), removal, replacement and eviction never take away a chunk another
 * checkpoint still needs, a damaged chunk removes the entry, and tenants never share.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type CheckpointMeta, CorruptCheckpointError } from "../../../gpu-worker/checkpoints/store/types.ts";
import { syntheticState, tokensOf } from "../../support/synthetic-kv-state.ts";
import { testDataKey } from "../../support/test-data-key.ts";
import { StoreFixture } from "./fixture.ts";

let fx: StoreFixture;
beforeEach(() => {
  fx = new StoreFixture();
});
afterEach(() => fx.dispose());

/** A checkpoint of the first `n` tokens ("x" × n of text), extending `base` when given. */
async function checkpoint(
  n: number,
  options: {
    base?: CheckpointMeta;
    tenant?: string;
    sessionId?: string;
    reason?: "tool-frontier" | "cold-anchor";
  } = {},
): Promise<CheckpointMeta> {
  fx.clock += 1;
  const reason = options.reason ?? "tool-frontier";
  return fx.store.write(
    {
      tenant: options.tenant ?? "tenant-a",
      key: testDataKey(options.tenant ?? "tenant-a"),
      sessionId: reason === "cold-anchor" ? "" : (options.sessionId ?? "s1"),
      reason,
      toolUseIds: [`id-${n}`],
      payload: { text: "x".repeat(n), tokens: tokensOf(n), extra: null },
      ...(options.base ? { extends: options.base.id } : {}),
    },
    async (path) => writeFileSync(path, syntheticState(tokensOf(n))),
  );
}

async function loaded(meta: CheckpointMeta): Promise<Buffer> {
  let state = Buffer.alloc(0);
  await fx.store.load(meta, testDataKey(meta.tenant), async (path) => {
    state = readFileSync(path);
  });
  return state;
}

/** Bytes on disk under files/, each inode once (hard links share one). */
function diskBytes(): number {
  const seen = new Map<number, number>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else seen.set(statSync(path).ino, statSync(path).size);
    }
  };
  walk(join(fx.dir, "files"));
  return [...seen.values()].reduce((a, b) => a + b, 0);
}

describe("checkpoints extending a stored prefix", () => {
  it("store only the cells they add and load the exact whole state", async () => {
    const anchor = await checkpoint(400, { reason: "cold-anchor" });
    const turn = await checkpoint(440, { base: anchor });
    expect(turn.chain.map((l) => l.id)).toEqual([anchor.id]);
    // 40 of 440 cells: the chunk (plus payload) is about a tenth of the anchor's whole state.
    expect(turn.bytes).toBeLessThan(anchor.bytes * 0.2);
    expect((await loaded(turn)).equals(syntheticState(tokensOf(440)))).toBe(true);
    expect(fx.store.stats().bytes).toBe(diskBytes());
  });

  it("keep every chunk another checkpoint needs through removal, replacement and eviction, counted once", async () => {
    const anchor = await checkpoint(300, { reason: "cold-anchor" });
    const a1 = await checkpoint(330, { base: anchor, sessionId: "a" });
    const b = await checkpoint(350, { base: anchor, sessionId: "b" });
    expect(b.chain.map((l) => l.id)).toEqual([anchor.id]);
    // The session's next checkpoint extends a1 and replaces it (same session, same reason).
    const a2 = await checkpoint(380, { base: a1, sessionId: "a" });
    expect(a2.chain.map((l) => l.id)).toEqual([anchor.id, a1.id]);
    expect(fx.store.findBySession("tenant-a", "a")?.id).toBe(a2.id);
    expect(fx.store.stats().bytes).toBe(diskBytes());
    // The anchor is worth what the checkpoints chained on it are worth (issue 42, item 7): a budget
    // just below everything evicts the least recently used of those (b), not the anchor they share.
    fx.reopen({ budgetBytes: fx.store.stats().bytes - 1 });
    const key = testDataKey("tenant-a");
    expect(fx.store.findLongestPrefix(key, "x".repeat(300), { minTokens: 300 })?.id).toBe(anchor.id);
    expect(fx.store.findBySession("tenant-a", "b")).toBeUndefined();
    expect(fx.store.stats().bytes).toBe(diskBytes());
    expect((await loaded(a2)).equals(syntheticState(tokensOf(380)))).toBe(true);
    // Removing the anchor keeps the chunk a2 links, counted once though its writer is gone.
    fx.store.remove(anchor.id);
    expect(fx.store.findLongestPrefix(key, "x".repeat(300), { minTokens: 300 })).toBeUndefined();
    expect(fx.store.stats().bytes).toBe(diskBytes());
    expect((await loaded(a2)).equals(syntheticState(tokensOf(380)))).toBe(true);
    fx.store.remove(a2.id);
    expect(fx.store.stats().bytes).toBe(0);
    expect(diskBytes()).toBe(0);
  });

  it("evict a cold anchor only after the checkpoints chained on it, and first once none is (issue 42, item 7)", async () => {
    for (const bound of ["budget", "tenant-share"] as const) {
      fx.dispose();
      fx = new StoreFixture();
      const key = testDataKey("tenant-a");
      const anchor = await checkpoint(300, { reason: "cold-anchor" });
      const chained = await checkpoint(340, { base: anchor, sessionId: "s1" });
      // A session checkpoint chained on nothing, of lower weight than what chains on the anchor.
      const other = await fx.write({ text: "y".repeat(50), sessionId: "s2", reason: "parked", stateBytes: 64 });
      const total = fx.store.stats().bytes;
      fx.reopen(bound === "budget" ? { budgetBytes: total - 1 } : { budgetBytes: total - 1, tenantShareBytes: 1 });
      expect(fx.store.findLongestPrefix(key, "x".repeat(300), { minTokens: 300 })?.id, bound).toBe(anchor.id);
      expect(fx.store.findBySession("tenant-a", "s2"), bound).toBeUndefined();
      expect(fx.store.findBySession("tenant-a", "s1")?.id, bound).toBe(chained.id);
      expect(other.id).not.toBe(anchor.id);
      // Nothing chains on it any more: the anchor is worth its own weight and goes first.
      fx.store.remove(chained.id);
      fx.reopen({ budgetBytes: 1 << 30 });
      await checkpoint(120, { sessionId: "s3" });
      fx.reopen({ budgetBytes: fx.store.stats().bytes - 1 });
      expect(fx.store.findLongestPrefix(key, "x".repeat(300), { minTokens: 300 }), bound).toBeUndefined();
      expect(fx.store.findBySession("tenant-a", "s3"), bound).toBeDefined();
    }
  });

  it("remove the entry when a chunk of its chain is damaged", async () => {
    const anchor = await checkpoint(200, { reason: "cold-anchor" });
    const turn = await checkpoint(260, { base: anchor });
    const chunk = join(fx.dir, "files", `${turn.id}.chain`, "0.state");
    const bytes = readFileSync(chunk);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    // The link is the anchor's file too: both are damaged.
    writeFileSync(chunk, bytes);
    await expect(loaded(turn)).rejects.toBeInstanceOf(CorruptCheckpointError);
    expect(fx.store.findBySession("tenant-a", "s1")).toBeUndefined();
  });

  it("are never made from another tenant's state", async () => {
    const anchor = await checkpoint(200, { reason: "cold-anchor", tenant: "tenant-b" });
    const turn = await checkpoint(260, { base: anchor, tenant: "tenant-a" });
    expect(turn.chain).toEqual([]);
    expect(readdirSync(join(fx.dir, "files")).some((name) => name.startsWith(`${turn.id}.chain`))).toBe(false);
    expect((await loaded(turn)).equals(syntheticState(tokensOf(260)))).toBe(true);
    expect(await fx.store.localPayload(anchor, testDataKey("tenant-a"))).toBeUndefined();
  });
});
