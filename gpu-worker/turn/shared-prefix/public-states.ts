/**
 * The KV of each registered public prefix (public-prefixes.ts), saved once by this worker process
 * from the first turn that prefills it, in memory-backed scratch: a state file of the public tokens
 * only, under the public prefix's content hash, never a tenant's key. It is written by this process
 * and never read from shared storage or the replica (a forged file would feed every tenant), and is
 * kept while the worker runs (as many files as registered prefixes); a restart saves it again.
 */
import { existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EngineSequence, Token } from "../../../native/engine-types.ts";
import type { PublicPrefix } from "../../continuation/shared-prefix/public-prefixes.ts";
import { log } from "../../log.ts";

export interface PublicState {
  readonly prefix: PublicPrefix;
  /** The public tokens the state holds (the tokenization of the registered text, possibly one short at its end). */
  readonly tokens: readonly Token[];
  readonly path: string;
  readonly bytes: number;
}

export class PublicPrefixStates {
  readonly #states = new Map<string, PublicState>();
  readonly #saving = new Set<string>();
  readonly #dir: string;

  constructor(scratchDir?: string) {
    this.#dir = scratchDir ?? (existsSync("/dev/shm") ? "/dev/shm" : tmpdir());
  }

  get(prefix: PublicPrefix): PublicState | undefined {
    return this.#states.get(prefix.sha256);
  }

  /** Whether a turn should save this prefix's state on its way (none saved, none being saved). */
  wanted(prefix: PublicPrefix): boolean {
    return !this.#states.has(prefix.sha256) && !this.#saving.has(prefix.sha256);
  }

  /** Save `sequence`, which holds exactly the public tokens now; a failure is logged, never the turn's. */
  async save(prefix: PublicPrefix, sequence: EngineSequence): Promise<void> {
    if (!this.wanted(prefix)) return;
    this.#saving.add(prefix.sha256);
    const path = join(this.#dir, `frontier-public-${process.pid}-${prefix.sha256.slice(0, 32)}.state`);
    try {
      const tokens = [...sequence.tokens];
      const { bytes } = await sequence.saveState(path);
      this.#states.set(prefix.sha256, { prefix, tokens, path, bytes });
      log("public prefix saved", { name: prefix.name, tokens: tokens.length, bytes });
    } catch (error) {
      rmSync(path, { force: true });
      log("public prefix save failed", { name: prefix.name, error: String(error) });
    } finally {
      this.#saving.delete(prefix.sha256);
    }
  }

  /** Saved states (the worker's gauges and logs). */
  stats(): { states: number; bytes: number } {
    let bytes = 0;
    for (const state of this.#states.values()) bytes += state.bytes;
    return { states: this.#states.size, bytes };
  }

  /** Delete the files (shutdown). */
  dispose(): void {
    for (const state of this.#states.values()) rmSync(state.path, { force: true });
    this.#states.clear();
  }
}
