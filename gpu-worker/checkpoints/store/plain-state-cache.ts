/**
 * The plain states of recently written checkpoints, kept in scratch memory (tmpfs, never disk), so
 * restoring a session parked on this worker a moment ago skips decrypting its sealed file: the
 * restore path stays a file load, as it was before checkpoints were sealed. A hit still proves the
 * caller holds the tenant's key: the sealed file's header must open under it
 * (`checkSealedKey`) before the plain copy is linked to the caller's path, so a wrong key is the
 * same clean miss as without the cache. Least recently used copies go past the budget; all of it
 * goes with the process (the scratch directory is removed on close), so the first restore after a
 * restart decrypts. Only a memory-backed scratch directory (`/dev/shm`) gets a cache.
 */
import { mkdirSync, rmSync } from "node:fs";
import { link, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";

export class PlainStateCache {
  readonly #dir: string;
  readonly #budgetBytes: number;
  /** Checkpoint id → its plain copy; Map order is least recently used first. */
  readonly #entries = new Map<string, { path: string; bytes: number }>();
  #bytes = 0;

  constructor(dir: string, budgetBytes: number) {
    this.#dir = dir;
    this.#budgetBytes = budgetBytes;
    if (budgetBytes > 0) mkdirSync(dir, { recursive: true });
  }

  /** Whether a scratch directory is memory-backed, so plain copies may stay in it. */
  static inMemory(dir: string): boolean {
    return dir === "/dev/shm" || dir.startsWith("/dev/shm/");
  }

  has(id: string): boolean {
    return this.#entries.has(id);
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Take the plain state at `plainPath` (same file system) as checkpoint `id`'s copy: moved, or with
   * `link` (a state just opened for a load, still to be read there) hard-linked, so `plainPath` stays
   * and removing it later only drops a name. False when it does not fit (the caller removes the file
   * then). Never throws: a full tmpfs only means no copy.
   */
  async keep(id: string, plainPath: string, options: { link?: boolean } = {}): Promise<boolean> {
    if (this.#budgetBytes <= 0) return false;
    try {
      const { size } = await stat(plainPath);
      if (size > this.#budgetBytes) return false;
      const path = join(this.#dir, `${id}.state`);
      this.drop(id);
      if (options.link) {
        await rm(path, { force: true }); // a leftover of an earlier process: link does not replace
        await link(plainPath, path);
      } else {
        await rename(plainPath, path);
      }
      this.#entries.set(id, { path, bytes: size });
      this.#bytes += size;
      while (this.#bytes > this.#budgetBytes) {
        const oldest = this.#entries.keys().next().value;
        if (oldest === undefined || oldest === id) break;
        this.drop(oldest);
      }
      return true;
    } catch {
      return false;
    }
  }

  /** Link `id`'s plain copy to `path` (the caller removes `path`; the copy stays); false on a miss. */
  async linkTo(id: string, path: string): Promise<boolean> {
    const entry = this.#entries.get(id);
    if (!entry) return false;
    try {
      await link(entry.path, path);
    } catch {
      this.drop(id);
      return false;
    }
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    return true;
  }

  /** Forget `id`'s copy (its checkpoint is gone or rewritten). */
  drop(id: string): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    this.#bytes -= entry.bytes;
    rmSync(entry.path, { force: true });
  }

  async clear(): Promise<void> {
    for (const { path } of this.#entries.values()) await rm(path, { force: true });
    this.#entries.clear();
    this.#bytes = 0;
  }
}
