/**
 * Plain states kept in scratch memory for restores (plain-state-cache.ts): a restore of a state
 * written (or already loaded) here skips the decryption but still needs the tenant's key, the disk keeps ciphertext
 * only, and the copies stay within their budget.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CheckpointFiles } from "../../../gpu-worker/checkpoints/store/checkpoint-files.ts";
import { PlainStateCache } from "../../../gpu-worker/checkpoints/store/plain-state-cache.ts";
import { CheckpointKeyError } from "../../../gpu-worker/checkpoints/store/types.ts";
import { testDataKey } from "../../support/test-data-key.ts";

let root = "";
let scratch = 0;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "frontier-plain-cache-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const key = testDataKey("tenant-a");
const payload = { text: "t", tokens: [1, 2, 3], extra: {} };
const state = (n: number, fill: number) => Buffer.alloc(n, fill);
const scratchPath = () => join(root, "scratch", `${scratch++}.state`);

function files(budget: number): { files: CheckpointFiles; cache: PlainStateCache } {
  const cache = new PlainStateCache(join(root, "scratch", "plain"), budget);
  return { files: new CheckpointFiles(join(root, "files"), scratchPath, cache), cache };
}

async function write(f: CheckpointFiles, id: string, bytes: Buffer): Promise<void> {
  await f.write(id, key, payload, async (path) => writeFileSync(path, bytes));
}

describe("PlainStateCache", () => {
  it("restores a state written here from memory: the sealed file on disk is never decrypted", async () => {
    const { files: f, cache } = files(1024 * 1024);
    const id = "a".repeat(32);
    await write(f, id, state(4096, 7));
    expect(cache.has(id)).toBe(true);
    expect(readFileSync(f.statePath(id)).includes(state(64, 7))).toBe(false); // ciphertext on disk
    // Break a body segment of the sealed file (not its header): only a decryption would notice.
    const sealed = readFileSync(f.statePath(id));
    sealed[sealed.length - 100] = (sealed[sealed.length - 100] ?? 0) ^ 0xff;
    writeFileSync(f.statePath(id), sealed);
    const out = join(root, "restored.state");
    await f.openState(id, f.statePath(id), key, out);
    expect(readFileSync(out).equals(state(4096, 7))).toBe(true);
    rmSync(out);
    expect(cache.has(id)).toBe(true); // the caller's copy was a link: the cache keeps its own
  });

  it("a state decrypted for a load (after a restart) is kept: the next load skips the decryption", async () => {
    const before = files(1024 * 1024);
    const id = "c".repeat(32);
    await write(before.files, id, state(4096, 9));
    // A restart: a new cache, empty, over the same sealed files.
    const { files: f, cache } = files(1024 * 1024);
    expect(cache.has(id)).toBe(false);
    const first = join(root, "first.state");
    await f.openState(id, f.statePath(id), key, first);
    expect(readFileSync(first).equals(state(4096, 9))).toBe(true);
    expect(cache.has(id)).toBe(true);
    rmSync(first); // the reader's name only: the cache keeps its own
    // Break a body segment: a second decryption would fail; the kept copy serves the load.
    const sealed = readFileSync(f.statePath(id));
    sealed[sealed.length - 100] = (sealed[sealed.length - 100] ?? 0) ^ 0xff;
    writeFileSync(f.statePath(id), sealed);
    const second = join(root, "second.state");
    await f.openState(id, f.statePath(id), key, second);
    expect(readFileSync(second).equals(state(4096, 9))).toBe(true);
  });

  it("a hit still needs the tenant's key: another key is the same clean key miss as without the cache", async () => {
    const { files: f } = files(1024 * 1024);
    const id = "b".repeat(32);
    await write(f, id, state(2048, 3));
    const out = join(root, "stolen.state");
    await expect(f.openState(id, f.statePath(id), testDataKey("tenant-b"), out)).rejects.toBeInstanceOf(
      CheckpointKeyError,
    );
    expect(existsSync(out)).toBe(false);
  });

  it("keeps recent copies within its budget (least recently used go first), and forgets removed checkpoints", async () => {
    const { files: f, cache } = files(10_000);
    const [x, y, z] = ["1", "2", "3"].map((c) => c.repeat(32)) as [string, string, string];
    await write(f, x, state(4000, 1));
    await write(f, y, state(4000, 2));
    await f.openState(x, f.statePath(x), key, join(root, "touch.state")); // x is now the most recent
    await write(f, z, state(4000, 3));
    expect([cache.has(x), cache.has(y), cache.has(z)]).toEqual([true, false, true]);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    // A miss decrypts the sealed file as before.
    const out = join(root, "y.state");
    await f.openState(y, f.statePath(y), key, out);
    expect(readFileSync(out).equals(state(4000, 2))).toBe(true);
    f.remove(x);
    expect(cache.has(x)).toBe(false);
  });

  it("is only used on a memory-backed scratch directory", () => {
    expect(PlainStateCache.inMemory("/dev/shm")).toBe(true);
    expect(PlainStateCache.inMemory("/dev/shm/frontier")).toBe(true);
    expect(PlainStateCache.inMemory(tmpdir())).toBe(false);
    expect(PlainStateCache.inMemory("/dev/shmx")).toBe(false);
  });
});
