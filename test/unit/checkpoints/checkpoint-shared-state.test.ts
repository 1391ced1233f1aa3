/**
 * Checkpoints that share an older checkpoint's KV state (a hard link, no bytes written): the shared
 * state loads byte for byte, each checkpoint is charged only for what it added, removal, replacement
 * and eviction never take away a state another checkpoint still needs, and tenants never share.
 */
import { readFileSync, statSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CheckpointMeta } from "../../../gpu-worker/checkpoints/types.ts";
import { StoreFixture } from "./fixture.ts";

let fx: StoreFixture;
beforeEach(() => {
  fx = new StoreFixture();
});
afterEach(() => fx.dispose());

/** A session checkpoint sharing `base`'s state: its text and tokens extend the base's. */
async function sharing(base: CheckpointMeta, text: string, options: { tenant?: string; sessionId?: string } = {}) {
  const tokens = Array.from(text, (_, i) => i);
  const meta = await fx.store.write(
    {
      tenant: options.tenant ?? "tenant-a",
      sessionId: options.sessionId ?? "s1",
      reason: "tool-frontier",
      toolUseIds: [`id-${text.length}`],
      payload: { text, tokens, stateTokens: base.tokenCount, extra: null },
      linkStateOf: base.id,
    },
    async () => {
      throw new Error("a shared state is never written");
    },
  );
  return meta;
}

/** Load `meta` and return the state bytes the engine would read and the tokens it must prefill. */
async function loadState(meta: CheckpointMeta): Promise<{ state: Buffer; tail: number }> {
  let state = Buffer.alloc(0);
  const payload = await fx.store.load(meta, meta.tenant, async (path) => {
    state = readFileSync(path);
  });
  return { state, tail: payload.tokens.length - (payload.stateTokens ?? payload.tokens.length) };
}

describe("checkpoints sharing a stored prefix's state", () => {
  it("load the prefix's exact state, with the rest to prefill, and add only their payload to the disk", async () => {
    const anchor = await fx.write({ text: "system+tools", reason: "cold-anchor", stateBytes: 64 * 1024 });
    const before = fx.store.stats().bytes;
    const session = await sharing(anchor, "system+tools user turn");
    expect(session.bytes).toBeLessThan(1024);
    expect(fx.store.stats().bytes).toBe(before + session.bytes);
    const loaded = await loadState(session);
    expect(loaded.state.equals(fx.states.get(anchor.id)!)).toBe(true);
    expect(loaded.tail).toBe("system+tools user turn".length - "system+tools".length);
    // One copy on disk: the two names are the same file.
    expect(statSync(fx.statePath(session.id)).ino).toBe(statSync(fx.statePath(anchor.id)).ino);
  });

  it("survive the removal and the eviction of the checkpoint whose state they share", async () => {
    const anchor = await fx.write({ text: "prefix", reason: "cold-anchor", stateBytes: 64 * 1024 });
    const a = await sharing(anchor, "prefix and a", { sessionId: "a" });
    const b = await sharing(anchor, "prefix and b", { sessionId: "b" });
    // The anchor is the least valuable entry: a budget that holds less than everything evicts it.
    fx.reopen({ budgetBytes: fx.store.stats().bytes - 1 });
    expect(fx.store.findLongestPrefix("tenant-a", "prefix")).toBeUndefined();
    for (const meta of [a, b]) expect((await loadState(meta)).state.equals(fx.states.get(anchor.id)!)).toBe(true);
    // A chain: the session's next checkpoint shares a's state and replaces a (same session, same reason).
    const next = await sharing(a, "prefix and a, then more", { sessionId: "a" });
    expect(fx.store.findBySession("tenant-a", "a")?.id).toBe(next.id);
    expect((await loadState(next)).state.equals(fx.states.get(anchor.id)!)).toBe(true);
    fx.store.remove(b.id);
    expect((await loadState(next)).state.equals(fx.states.get(anchor.id)!)).toBe(true);
  });

  it("are never made from another tenant's state", async () => {
    const anchor = await fx.write({ text: "prefix", reason: "cold-anchor", tenant: "tenant-b" });
    await expect(sharing(anchor, "prefix and more", { tenant: "tenant-a" })).rejects.toThrow(/not on local disk/);
    expect(fx.store.findBySession("tenant-a", "s1")).toBeUndefined();
    expect(await fx.store.localPayload(anchor, "tenant-a")).toBeUndefined();
    expect((await fx.store.localPayload(anchor, "tenant-b"))?.text).toBe("prefix");
  });
});
