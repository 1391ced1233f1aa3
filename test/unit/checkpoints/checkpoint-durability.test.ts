/** Checkpoint store eviction, pinning, corruption, replacement and reconciliation at open. */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CheckpointKeyError, CorruptCheckpointError } from "../../../gpu-worker/checkpoints/store/types.ts";
import { testDataKey } from "../../support/test-data-key.ts";
import { StoreFixture } from "./fixture.ts";

let fx: StoreFixture;
beforeEach(() => {
  fx = new StoreFixture();
});
afterEach(() => fx.dispose());

const filesOf = (id: string) => [fx.statePath(id), fx.payloadPath(id)];
const exists = (id: string) => filesOf(id).every((p) => existsSync(p));
const gone = (id: string) => filesOf(id).every((p) => !existsSync(p));

describe("eviction", () => {
  it("evicts by reason value, then least recently used, and keeps the budget", async () => {
    const spec = { stateBytes: 1000 } as const;
    const periodicOld = await fx.write({ ...spec, text: "a" });
    const periodicNew = await fx.write({ ...spec, text: "b" });
    const anchor = await fx.write({ ...spec, text: "c", reason: "cold-anchor" });
    const parked = await fx.write({ ...spec, text: "d", reason: "parked", sessionId: "s1" });
    const frontier = await fx.write({ ...spec, text: "e", reason: "tool-frontier", sessionId: "s2" });
    await fx.load(periodicOld); // now more recently used than periodicNew
    const size = periodicOld.bytes;
    const budget = size * 3 + 10;

    fx.reopen({ budgetBytes: budget });
    expect(gone(periodicNew.id) && gone(periodicOld.id) && exists(anchor.id)).toBe(true);
    expect(fx.store.stats()).toMatchObject({ count: 3, bytes: size * 3, budgetBytes: budget });

    const shutdown = await fx.write({ ...spec, text: "f", reason: "shutdown", sessionId: "s3" });
    expect(gone(anchor.id)).toBe(true);
    const newest = await fx.write({ ...spec, text: "g" }); // the new entry is never its own victim
    expect(gone(parked.id) && exists(shutdown.id) && exists(frontier.id) && exists(newest.id)).toBe(true);
    expect(fx.store.stats().bytes).toBeLessThanOrEqual(budget);
    expect(fx.store.stats().byReason).toEqual({
      "cold-anchor": 0,
      "tool-frontier": 1,
      periodic: 1,
      parked: 0,
      shutdown: 1,
    });
  });

  it("never evicts an entry while it is being loaded", async () => {
    fx.reopen({ budgetBytes: 1 });
    const loading = await fx.write({ text: "low value", stateBytes: 500 }); // alone over budget, but new
    await fx.load(loading, async () => {
      await fx.write({ text: "high value", reason: "tool-frontier", sessionId: "s" });
      fx.store.evictToBudget(); // may take anything but the pinned entry
      expect(exists(loading.id)).toBe(true);
    });
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "low value!")?.id).toBe(loading.id);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "high value!")).toBeUndefined();
    fx.store.evictToBudget(); // unpinned now
    expect(gone(loading.id)).toBe(true);
    expect(fx.store.stats()).toMatchObject({ count: 0, bytes: 0 });
  });

  it("defers deleting the files of an entry removed or replaced during its load", async () => {
    const loading = await fx.write({ text: "parked 1", reason: "parked", sessionId: "s" });
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const concurrent = fx.load(loading, () => gate); // a second load holds its own pin
    await fx.load(loading, async () => {
      const replacement = await fx.write({ text: "parked 2", reason: "parked", sessionId: "s" });
      expect(fx.store.findBySession("tenant-a", "s")?.id).toBe(replacement.id);
      expect(fx.store.remove(loading.id)).toBe(false); // the row is already gone
      expect(exists(loading.id)).toBe(true); // readState still reads the file after this
    });
    expect(exists(loading.id)).toBe(true); // the other load still holds it
    release();
    await concurrent;
    expect(gone(loading.id)).toBe(true);
    expect(fx.store.stats().count).toBe(1);
  });
});

describe("corruption", () => {
  it("flipped state byte: the load fails with CorruptCheckpointError before the engine reads a byte, entry removed, store still works", async () => {
    const meta = await fx.write({ text: "victim" });
    const bytes = readFileSync(fx.statePath(meta.id));
    const at = bytes.length - 40; // inside the sealed body, past the 76-byte header
    bytes[at] = bytes[at]! ^ 0xff;
    writeFileSync(fx.statePath(meta.id), bytes);
    fx.reopen();
    let engineRead = false;
    const error = await fx.store
      .load(meta, testDataKey("tenant-a"), async () => {
        engineRead = true;
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CorruptCheckpointError);
    expect(error).toMatchObject({ kind: "checksum", checkpointId: meta.id });
    expect(engineRead).toBe(false);
    expect(gone(meta.id)).toBe(true);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "victim")).toBeUndefined();

    const next = await fx.write({ text: "victim" });
    expect((await fx.load(fx.store.findLongestPrefix(testDataKey("tenant-a"), "victim!")!)).text).toBe("victim");
    expect(next.id).not.toBe(meta.id);
  });

  it("a key that does not open a checkpoint is a CheckpointKeyError: nothing read, the entry kept for its own key", async () => {
    const meta = await fx.write({ text: "sealed", stateBytes: 3 << 20 });
    let engineRead = false;
    for (const key of [testDataKey("tenant-a", "rotated"), { tenant: "tenant-a", bytes: Buffer.alloc(32) }]) {
      await expect(
        fx.store.load(meta, key, async () => {
          engineRead = true;
        }),
      ).rejects.toBeInstanceOf(CheckpointKeyError);
      expect(await fx.store.localPayload(meta, key)).toBeUndefined();
    }
    expect(engineRead).toBe(false);
    expect(gone(meta.id)).toBe(false);
    await expect(fx.load(meta)).resolves.toMatchObject({ text: "sealed" });
  });

  it("a truncated state file is corrupt and removed", async () => {
    const meta = await fx.write({ text: "cut", stateBytes: 2 << 20 });
    const bytes = readFileSync(fx.statePath(meta.id));
    writeFileSync(fx.statePath(meta.id), bytes.subarray(0, bytes.length - (1 << 20)));
    await expect(fx.load(meta)).rejects.toMatchObject({ name: CorruptCheckpointError.name, kind: "checksum" });
    expect(gone(meta.id)).toBe(true);
  });

  it("missing file or truncated payload: CorruptCheckpointError and the entry is removed", async () => {
    const missing = await fx.write({ text: "one" });
    rmSync(fx.payloadPath(missing.id));
    await expect(fx.load(missing)).rejects.toMatchObject({ kind: "missing" });
    const truncated = await fx.write({ text: "two" });
    writeFileSync(fx.payloadPath(truncated.id), "{");
    await expect(fx.load(truncated)).rejects.toBeInstanceOf(CorruptCheckpointError);
    expect(fx.store.stats().count).toBe(0);
    expect(readdirSync(join(fx.dir, "files"))).toEqual([]);
  });

  it("a failed writeState leaves neither files nor a row", async () => {
    const write = fx.store.write(
      {
        tenant: "t",
        key: testDataKey("t"),
        sessionId: "",
        reason: "periodic",
        toolUseIds: [],
        payload: { text: "x", tokens: [1], extra: 1 },
      },
      async (tempPath) => {
        writeFileSync(tempPath, "partial");
        throw new Error("engine failed");
      },
    );
    await expect(write).rejects.toThrow("engine failed");
    expect(readdirSync(join(fx.dir, "files"))).toEqual([]);
    expect(fx.store.stats().count).toBe(0);
  });
});

describe("replacement", () => {
  it("a session's new parked checkpoint replaces the old one and deletes its files", async () => {
    const first = await fx.write({ text: "turn 1", reason: "parked", sessionId: "s1" });
    const frontier = await fx.write({ text: "turn 1 tool", reason: "tool-frontier", sessionId: "s1" });
    const other = await fx.write({ text: "turn 1", reason: "parked", sessionId: "s2" });
    const anchorA = await fx.write({ text: "sys", reason: "cold-anchor" });
    const anchorB = await fx.write({ text: "sys", reason: "cold-anchor" });
    const second = await fx.write({ text: "turn 2", reason: "parked", sessionId: "s1" });
    expect(gone(first.id)).toBe(true);
    expect([second, frontier, other, anchorA, anchorB].every((m) => exists(m.id))).toBe(true);
    expect(fx.store.stats().byReason.parked).toBe(2);
  });
});

describe("open", () => {
  it("keeps entries across a reopen", async () => {
    const meta = await fx.write({ text: "durable", reason: "tool-frontier", sessionId: "s", toolUseIds: ["id1"] });
    await fx.load(meta);
    fx.reopen();
    const found = fx.store.findByToolUseIds("tenant-a", ["id1"]);
    expect(found).toMatchObject({ id: meta.id, hits: 1, textLength: 7, tokenCount: 7, modelIdentity: "model-a" });
    expect((await fx.load(found!)).text).toBe("durable");
  });

  it("deletes orphan files and *.tmp leftovers, and drops rows whose files are gone", async () => {
    const kept = await fx.write({ text: "kept" });
    const broken = await fx.write({ text: "broken" });
    fx.store.close();
    const files = join(fx.dir, "files");
    const orphan = "0123456789abcdef0123456789abcdef";
    writeFileSync(join(files, `${orphan}.state`), "orphan");
    writeFileSync(join(files, `${orphan}.json`), "{}");
    writeFileSync(join(files, `${orphan}.state.tmp`), "crashed mid-write");
    writeFileSync(join(files, `${kept.id}.json.tmp`), "stale temp");
    writeFileSync(join(files, "stray.bin"), "?");
    rmSync(fx.statePath(broken.id));

    fx.open();
    expect(readdirSync(files).sort()).toEqual([`${kept.id}.json`, `${kept.id}.state`]);
    expect(fx.store.stats().count).toBe(1);
    expect(fx.store.findLongestPrefix(testDataKey("tenant-a"), "broken!")).toBeUndefined();
    expect((await fx.load(kept)).text).toBe("kept");
  });
});
