/**
 * A full checkpoint disk used to log "Failed to save state" and reclaim nothing (issue 14). A write
 * that fails on a full disk now evicts the least valuable half of the store and is tried once more;
 * other failures evict nothing. The disk here is a quota over the store's own bytes.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CheckpointMeta } from "../../../gpu-worker/checkpoints/store/types.ts";
import { testDataKey } from "../../support/test-data-key.ts";
import { StoreFixture } from "./fixture.ts";

const STATE_BYTES = 4096;
let fx: StoreFixture;
afterEach(() => fx.dispose());

/** A disk holding `quota` bytes, of which the store uses what its stats say. */
function fullDiskFixture(quota: number): StoreFixture {
  const fixture: StoreFixture = new StoreFixture({
    budgetBytes: 1 << 30,
    availableBytes: () => quota - fixture.store.stats().bytes,
  });
  return fixture;
}

/** Write like llama.cpp's state dump: it fails without an error code when the disk has no room. */
function writeState(quota: number) {
  return async (path: string): Promise<void> => {
    if (fx.store.stats().bytes + STATE_BYTES > quota) throw new Error("Failed to save state to file");
    writeFileSync(path, Buffer.alloc(STATE_BYTES, 7));
  };
}

const input = (text: string, reason: CheckpointMeta["reason"] = "periodic") => ({
  tenant: "tenant-a",
  key: testDataKey("tenant-a"),
  sessionId: reason === "periodic" ? "" : `s-${text}`,
  reason,
  toolUseIds: [],
  payload: { text, tokens: [1, 2, 3], extra: {} },
});

describe("checkpoint writes on a full disk", () => {
  it("evicts the least valuable checkpoints and retries the write once", async () => {
    fx = fullDiskFixture(0);
    const one = await fx.store.write(input("one"), writeState(1 << 30));
    const quota = one.bytes * 3 + 100;
    fx.dispose();
    fx = fullDiskFixture(quota);
    const old = await fx.store.write(input("old"), writeState(quota));
    const frontier = await fx.store.write(input("frontier", "tool-frontier"), writeState(quota));
    const newer = await fx.store.write(input("newer"), writeState(quota));
    expect(fx.store.stats().count).toBe(3);

    const last = await fx.store.write(input("last", "tool-frontier"), writeState(quota));
    const ids = new Set(readdirSync(join(fx.dir, "files")).map((f) => f.slice(0, 32)));
    expect(ids.has(last.id)).toBe(true);
    // The least valuable go first; the tool-frontier checkpoint stays.
    expect(ids.has(old.id)).toBe(false);
    expect(ids.has(frontier.id)).toBe(true);
    expect(ids.has(newer.id)).toBe(false); // half the bytes are reclaimed: both periodic ones
    expect(fx.store.stats().bytes).toBeLessThanOrEqual(quota);
  });

  it("reports the failure when there is nothing to reclaim, leaving no files behind", async () => {
    fx = fullDiskFixture(100);
    await expect(fx.store.write(input("big"), writeState(100))).rejects.toThrow(/Failed to save state/);
    expect(readdirSync(join(fx.dir, "files"))).toEqual([]);
  });

  it("evicts nothing for a failure that is not a full disk", async () => {
    fx = fullDiskFixture(1 << 30);
    const kept = await fx.store.write(input("kept"), writeState(1 << 30));
    const broken = async () => {
      throw new Error("engine is disposed");
    };
    await expect(fx.store.write(input("broken"), broken)).rejects.toThrow(/disposed/);
    expect(fx.store.stats().count).toBe(1);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "kept!")?.id).toBe(kept.id);
  });

  it("treats ENOSPC as a full disk whatever the free space says", async () => {
    fx = fullDiskFixture(1 << 30);
    await fx.store.write(input("a"), writeState(1 << 30));
    await fx.store.write(input("b"), writeState(1 << 30));
    let failed = false;
    const enospc = async (path: string) => {
      if (!failed) {
        failed = true;
        throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" });
      }
      writeFileSync(path, Buffer.alloc(STATE_BYTES, 1));
    };
    const written = await fx.store.write(input("c"), enospc);
    expect(fx.store.stats().count).toBeLessThan(3);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "c!")?.id).toBe(written.id);
  });
});
