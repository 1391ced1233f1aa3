/**
 * Which KV this worker holds, by block-hash chain (block-chain.ts): for each holder — a resident
 * session's sequence, a stored checkpoint, a public prefix's state — the chain of its tokens' full
 * blocks. A lookup finds the deepest block of a request's chain that some holder has, and those
 * holders, newest first. Chains are prefix-closed (a holder of block i holds every block before
 * it), so presence is monotone along a chain and the deepest block is found by binary search.
 *
 * The index is a hint, never the truth: a holder's KV may have changed since it was indexed (a new
 * turn, parking, eviction). Whoever uses a holder compares its tokens with the request's first (the
 * exact tokens, not the hashes) and drops the holder when they differ.
 *
 * Bounded: at most `maxBlocks` distinct blocks; past it the least recently used holders go first.
 * One block remembers at most HOLDERS_PER_BLOCK holders (the newest), which keeps lookups and memory
 * flat when many conversations share one prefix.
 */

/** Holders one block remembers (newest kept). */
const HOLDERS_PER_BLOCK = 8;

interface HolderEntry<Ref> {
  readonly ref: Ref;
  readonly chain: readonly string[];
}

export interface PrefixMatch<Ref> {
  /** Full blocks the holders share with the request's chain. */
  blocks: number;
  /** Holders of that deepest block, most recently indexed or used first. */
  refs: Ref[];
}

export interface PrefixIndexStats {
  holders: number;
  blocks: number;
  /** Σ blocks over holders (blocks shared by several holders count once in `blocks`). */
  heldBlocks: number;
  /** Holders evicted to keep within `maxBlocks`, since start. */
  evicted: number;
}

export class SharedPrefixIndex<Ref> {
  /** Block hash → keys of its holders, oldest first. */
  readonly #blocks = new Map<string, string[]>();
  /** Holder key → entry, least recently used first. */
  readonly #holders = new Map<string, HolderEntry<Ref>>();
  #heldBlocks = 0;
  #evicted = 0;

  constructor(readonly maxBlocks: number) {
    if (!Number.isInteger(maxBlocks) || maxBlocks < 1) throw new RangeError("maxBlocks must be a positive integer");
  }

  /** `key` now holds exactly `chain` (whatever it held before is forgotten); an empty chain drops it. */
  hold(key: string, ref: Ref, held: readonly string[]): void {
    this.drop(key);
    const chain = held.length > this.maxBlocks ? held.slice(0, this.maxBlocks) : held;
    if (chain.length === 0) return;
    this.#holders.set(key, { ref, chain });
    this.#heldBlocks += chain.length;
    for (const hash of chain) {
      const holders = this.#blocks.get(hash);
      if (!holders) this.#blocks.set(hash, [key]);
      else {
        holders.push(key);
        if (holders.length > HOLDERS_PER_BLOCK) holders.shift();
      }
    }
    while (this.#blocks.size > this.maxBlocks) {
      const oldest = this.#holders.keys().next().value;
      if (oldest === undefined || oldest === key) break;
      this.drop(oldest);
      this.#evicted++;
    }
  }

  /** Forget `key`; false when it held nothing. */
  drop(key: string): boolean {
    const entry = this.#holders.get(key);
    if (!entry) return false;
    this.#holders.delete(key);
    this.#heldBlocks -= entry.chain.length;
    for (const hash of entry.chain) {
      const holders = this.#blocks.get(hash);
      if (!holders) continue;
      const at = holders.lastIndexOf(key);
      if (at >= 0) holders.splice(at, 1);
      if (holders.length === 0) this.#blocks.delete(hash);
    }
    return true;
  }

  /** The deepest block of `chain` some holder has, with its holders; undefined when none has the first. */
  lookup(chain: readonly string[]): PrefixMatch<Ref> | undefined {
    let low = 0;
    let high = chain.length;
    // Invariant: blocks [0, low) are present; chain[high] (when high < length) is absent.
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#blocks.has(chain[mid] ?? "")) low = mid + 1;
      else high = mid;
    }
    if (low === 0) return undefined;
    const keys = this.#blocks.get(chain[low - 1] ?? "") ?? [];
    const refs: Ref[] = [];
    for (let i = keys.length - 1; i >= 0; i--) {
      const entry = this.#holders.get(keys[i] ?? "");
      if (entry) refs.push(entry.ref);
    }
    return { blocks: low, refs };
  }

  /** Mark `key` as just used (the last to be evicted). */
  touch(key: string): void {
    const entry = this.#holders.get(key);
    if (!entry) return;
    this.#holders.delete(key);
    this.#holders.set(key, entry);
  }

  stats(): PrefixIndexStats {
    return {
      holders: this.#holders.size,
      blocks: this.#blocks.size,
      heldBlocks: this.#heldBlocks,
      evicted: this.#evicted,
    };
  }
}
