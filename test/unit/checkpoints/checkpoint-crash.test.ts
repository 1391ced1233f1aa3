/**
 * A worker process SIGKILLed while it writes a checkpoint leaves a consistent store: the next
 * process that opens it finds the newest committed checkpoint intact (its checksum verifies and its
 * bytes are the ones written), never a half-written one, and no leftover files.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointStore } from "../../../gpu-worker/checkpoints/store/checkpoint-store.ts";
import { REPO_ROOT } from "../../../scripts/stack.ts";
import { syntheticState, tokensOf } from "../../support/synthetic-kv-state.ts";
import { testDataKey } from "../../support/test-data-key.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Start the writer child; resolves its stdout lines one by one through `next`. */
function startWriter(
  dir: string,
  mode: "pause" | "loop" | "chain-pause" | "chain-loop",
  scratch?: string,
): { child: ChildProcess; waitFor: (line: RegExp) => Promise<string> } {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      join(REPO_ROOT, "test/support/checkpoint-writer-child.ts"),
      dir,
      mode,
      ...(scratch ? [scratch] : []),
    ],
    {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line);
    for (const w of waiters.splice(0)) {
      if (w.pattern.test(line)) w.resolve(line);
      else waiters.push(w);
    }
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return resolve(seen);
      waiters.push({ pattern, resolve });
      child.once("exit", (code, signal) => reject(new Error(`writer exited (${code ?? signal}) before ${pattern}`)));
    });
  return { child, waitFor };
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

/** Open the store as the next worker would and check every row against its files and bytes. */
async function reopenAndCheck(dir: string): Promise<number> {
  const store = CheckpointStore.open({ dir, budgetBytes: 1 << 30, modelIdentity: "model-a" });
  try {
    const newest = store.findBySession("tenant-a", "s1");
    if (!newest) throw new Error("no checkpoint survived");
    const i = Number(newest.toolUseIds[0]?.replace("id-", ""));
    const payload = await store.load(newest, testDataKey("tenant-a"), async (statePath) => {
      expect(readFileSync(statePath).equals(Buffer.alloc(1 << 20, i & 0xff))).toBe(true);
    });
    expect(payload.text).toBe(`turn ${i}`);
    // One session checkpoint (each write replaced the last), two files, nothing half-written left.
    expect(store.stats().count).toBe(1);
    expect(readdirSync(join(dir, "files")).sort()).toEqual([`${newest.id}.json`, `${newest.id}.state`]);
    return i;
  } finally {
    store.close();
  }
}

/** Like {@link reopenAndCheck} for the chained writer: the newest turn loads its exact whole state. */
async function reopenChainAndCheck(dir: string, scratch: string): Promise<number> {
  const store = CheckpointStore.open({ dir, budgetBytes: 1 << 30, modelIdentity: "model-a", scratchDir: scratch });
  try {
    const newest = store.findBySession("tenant-a", "s1");
    if (!newest) throw new Error("no checkpoint survived");
    const i = Number(newest.toolUseIds[0]?.replace("id-", ""));
    expect(newest.chain.length).toBe(i + 1);
    const n = 256 + 64 * (i + 1);
    await store.load(newest, testDataKey("tenant-a"), async (statePath) => {
      expect(readFileSync(statePath).equals(syntheticState(tokensOf(n)))).toBe(true);
    });
    // The anchor and the newest turn (its chunk, payload and chain links); the dead writer's
    // scratch dump is gone; the store counts what is on disk.
    expect(store.stats().count).toBe(2);
    const anchor = newest.chain[0]?.id ?? "";
    expect(readdirSync(join(dir, "files")).sort()).toEqual(
      [`${anchor}.json`, `${anchor}.state`, `${newest.id}.chain`, `${newest.id}.json`, `${newest.id}.state`].sort(),
    );
    const live = readdirSync(scratch).filter((name) => name.startsWith("frontier-kv-"));
    expect(live).toHaveLength(1);
    expect(live[0]).toMatch(new RegExp(`^frontier-kv-${process.pid}-[0-9a-f]{8}$`));
    return i;
  } finally {
    store.close();
    // Closing the store removes its own scratch directory.
    expect(readdirSync(scratch).filter((name) => name.startsWith("frontier-kv-"))).toEqual([]);
  }
}

describe("a SIGKILL during a chained (chunk) checkpoint write", () => {
  it("halfway through the whole-state dump: the previous turn loads whole and nothing is left over", async () => {
    const dir = mkdtempSync(join(tmpdir(), "frontier-crash-"));
    const scratch = mkdtempSync(join(tmpdir(), "frontier-scratch-"));
    dirs.push(dir, scratch);
    const writer = startWriter(dir, "chain-pause", scratch);
    await writer.waitFor(/^mid-state$/);
    await kill(writer.child);
    expect(await reopenChainAndCheck(dir, scratch)).toBe(2);
  });

  it("at whatever step a chained write is in: the newest committed turn loads whole", async () => {
    const dir = mkdtempSync(join(tmpdir(), "frontier-crash-"));
    const scratch = mkdtempSync(join(tmpdir(), "frontier-scratch-"));
    dirs.push(dir, scratch);
    const writer = startWriter(dir, "chain-loop", scratch);
    await writer.waitFor(/^committed 5$/);
    await kill(writer.child);
    expect(await reopenChainAndCheck(dir, scratch)).toBeGreaterThanOrEqual(5);
  });
});

describe("a SIGKILL during a checkpoint write", () => {
  it("halfway through the state file: the previous checkpoint is intact and the partial one is gone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "frontier-crash-"));
    dirs.push(dir);
    const writer = startWriter(dir, "pause");
    await writer.waitFor(/^mid-state$/);
    await kill(writer.child);
    expect(await reopenAndCheck(dir)).toBe(2);
  });

  it("at whatever step a write is in: the newest committed checkpoint is intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "frontier-crash-"));
    dirs.push(dir);
    const writer = startWriter(dir, "loop");
    await writer.waitFor(/^committed 5$/);
    await kill(writer.child);
    // Write 5 resolved before the kill; a later one may have committed before the kill landed.
    expect(await reopenAndCheck(dir)).toBeGreaterThanOrEqual(5);
  });
});
