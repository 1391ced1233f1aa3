/**
 * Scratch space for chunked KV states: the engine dumps a whole sequence state into memory
 * (`/dev/shm`), and only the chunk a checkpoint adds is written to the store's disk; a restore
 * assembles a checkpoint's chunks into one state file there for the engine to load.
 */
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, readdirSync, rmSync } from "node:fs";
import { copyFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembleState, type ChunkCheck, sliceState, UnsupportedStateError } from "./kv-state-chunks.ts";

/** `/dev/shm` where it is writable (memory), else the OS temp directory. */
export function defaultScratchDir(): string {
  try {
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return tmpdir();
  }
}

const PREFIX = "frontier-kv-";

/** A process killed mid-dump leaves its scratch directory behind: remove those of dead processes. */
function removeDeadScratch(scratchDir: string): void {
  for (const name of readdirSync(scratchDir)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split("-")[0]);
    if (!Number.isSafeInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    rmSync(join(scratchDir, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class ChunkedState {
  readonly #dir: string;

  constructor(scratchDir: string) {
    // One directory per store (`frontier-kv-<pid>-<random>`), so closing one store of a process
    // never removes another's dumps; a dead process's directories are found by the pid.
    this.#dir = join(scratchDir, `${PREFIX}${process.pid}-${randomBytes(4).toString("hex")}`);
    mkdirSync(this.#dir, { recursive: true });
    removeDeadScratch(scratchDir);
  }

  /** Remove this process's scratch directory (after in-flight dumps and loads have settled). */
  close(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** A fresh path in this store's scratch directory (memory); the caller removes the file. */
  scratchPath(): string {
    return join(this.#dir, `${randomBytes(8).toString("hex")}.state`);
  }

  /**
   * `dumpState(scratch)` writes the whole state; the cells at positions ≥ `fromPos` go to `path`
   * (true). A layout the chunker does not know is copied whole instead (false).
   */
  async writeChunk(fromPos: number, path: string, dumpState: (path: string) => Promise<void>): Promise<boolean> {
    const scratch = this.scratchPath();
    try {
      await dumpState(scratch);
      try {
        await sliceState(scratch, fromPos, path);
        return true;
      } catch (error) {
        if (!(error instanceof UnsupportedStateError)) throw error;
        await copyFile(scratch, path);
        return false;
      }
    } finally {
      await rm(scratch, { force: true });
    }
  }

  /**
   * Assemble `chunks` (oldest first, each checked) into one scratch state file for `use`, then drop
   * it: in the background, so freeing a whole state's pages is not on the restore's path.
   */
  async assembled<T>(
    chunks: readonly string[],
    checks: readonly ChunkCheck[],
    use: (path: string) => Promise<T>,
  ): Promise<T> {
    const scratch = this.scratchPath();
    try {
      await assembleState(chunks, checks, scratch);
      return await use(scratch);
    } finally {
      void rm(scratch, { force: true }).catch(() => undefined);
    }
  }
}
