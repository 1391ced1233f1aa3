/**
 * One simulated llama-server (`--parallel P`, `cache_prompt` on, its host prompt cache as shipped), in
 * trace blocks: which slot a request gets and what that slot then holds. Modelled on the server's
 * `get_available_slot` and `server_prompt_cache` (ggml-org/llama.cpp tools/server):
 *
 * - among idle slots holding tokens, the one whose tokens share the largest fraction of the prompt
 *   (longest common prefix / prompt length), above `--slot-prompt-similarity` (0.1); else the least
 *   recently used idle slot (a never-used one first; ties to the later slot);
 * - when the slot was chosen by LRU, or by similarity but keeping under half of its tokens, the slot's
 *   prompt is saved to the host cache (skipped when an entry already contains it; entries it contains
 *   are dropped), then the entry sharing the most with the prompt replaces the slot's tokens when it
 *   beats the slot on both the fraction of itself kept and the fraction of the prompt covered (entries
 *   keeping under a quarter of themselves are skipped); a loaded entry leaves the cache;
 * - the cache drops its oldest entries past its budget, always keeping one.
 *
 * Approximations: token counts are the trace's (a block's 512 tokens, a turn's output as its
 * `output_length`), and two states share tokens only in whole blocks, or wholly when one continues the
 * other (the next turn of a conversation holds the previous prompt and its output). The cache's
 * budget is in tokens (the server's is `--cache-ram` MiB, 8,192 by default, and at least the context's
 * tokens): the simulation gives it the same tokens as a Frontier worker's checkpoint budget. An empty
 * slot loads nothing from the cache (the server divides by its zero tokens: NaN compares false).
 */
import { BLOCK_TOKENS } from "../trace/trace-file.ts";
import { type KvContent, sharedBlocks } from "./sim-result.ts";
import { fullBlocks, type SimRequest } from "./trace-sessions.ts";

/** `--slot-prompt-similarity`'s default. */
export const SLOT_PROMPT_SIMILARITY = 0.1;

export interface Slot {
  readonly index: number;
  kv: KvContent | undefined;
  busy: boolean;
  /** Virtual ms of its last release; -1 never used. */
  lastUsed: number;
}

export interface SlotAssignment {
  slot: Slot;
  by: "prefix" | "lru";
  /** Tokens dumped to the host cache (the slot's old prompt) and loaded from it. */
  savedTokens: number;
  loadedTokens: number;
  /** What the slot (after any load) gives the prompt: whole shared blocks, and tokens with the previous output. */
  reusedBlocks: number;
  reusedWithOutput: number;
}

/** The request's prompt as a KV state. */
export function promptKv(r: SimRequest): KvContent {
  return { tokens: r.inputLength, blockKeys: r.prefixKeys.slice(0, fullBlocks(r)), inputTokens: r.inputLength };
}

/** Tokens two states share from the start: all of one when the other continues it, else their whole common blocks. */
export function commonTokens(a: KvContent, b: KvContent): number {
  const shared = sharedBlocks(a.blockKeys, b.blockKeys);
  if (shared === a.blockKeys.length && b.inputTokens >= a.tokens) return Math.min(a.tokens, b.tokens);
  if (shared === b.blockKeys.length && a.inputTokens >= b.tokens) return Math.min(a.tokens, b.tokens);
  return shared * BLOCK_TOKENS;
}

export class LlamaServerSlots {
  readonly slots: Slot[];
  /** The host prompt cache, oldest first. */
  readonly cache: KvContent[] = [];

  constructor(
    parallel: number,
    readonly cacheTokens: number,
    readonly similarity = SLOT_PROMPT_SIMILARITY,
  ) {
    this.slots = Array.from({ length: parallel }, (_, index) => ({ index, kv: undefined, busy: false, lastUsed: -1 }));
  }

  hasIdle(): boolean {
    return this.slots.some((s) => !s.busy);
  }

  cachedTokens(): number {
    return this.cache.reduce((sum, kv) => sum + kv.tokens, 0);
  }

  /** Take an idle slot for `r` (there must be one), updating the host cache as the server does. */
  assign(r: SimRequest): SlotAssignment {
    const prompt = promptKv(r);
    let slot: Slot | undefined;
    let best = 0;
    for (const s of this.slots) {
      if (s.busy || !s.kv || s.kv.tokens === 0) continue;
      const sim = commonTokens(s.kv, prompt) / prompt.tokens;
      if (sim > best && sim > this.similarity) {
        best = sim;
        slot = s;
      }
    }
    let by: SlotAssignment["by"] = "prefix";
    let update = false;
    if (slot?.kv) {
      update = commonTokens(slot.kv, prompt) / slot.kv.tokens < 0.5;
    } else {
      by = "lru";
      update = true;
      for (const s of this.slots) if (!s.busy && (!slot || s.lastUsed <= slot.lastUsed)) slot = s;
    }
    if (!slot) throw new Error("no idle slot");
    slot.busy = true;
    let savedTokens = 0;
    let loadedTokens = 0;
    if (update) {
      savedTokens = this.#save(slot.kv);
      const loaded = this.#load(slot.kv, prompt);
      if (loaded) {
        slot.kv = loaded;
        loadedTokens = loaded.tokens;
      }
      this.#evict();
    }
    const kv = slot.kv;
    return {
      slot,
      by,
      savedTokens,
      loadedTokens,
      reusedBlocks: kv ? sharedBlocks(kv.blockKeys, prompt.blockKeys) * BLOCK_TOKENS : 0,
      reusedWithOutput: kv ? commonTokens(kv, prompt) : 0,
    };
  }

  /** The turn ended: the slot holds its prompt and output, idle. */
  release(slot: Slot, kv: KvContent, now: number): void {
    slot.kv = kv;
    slot.busy = false;
    slot.lastUsed = now;
  }

  /** prompt_save: the tokens dumped (0 when an entry already holds them all or the slot is empty). */
  #save(kv: KvContent | undefined): number {
    if (!kv || kv.tokens === 0) return 0;
    if (this.cache.some((e) => commonTokens(e, kv) === kv.tokens)) return 0;
    for (let i = this.cache.length - 1; i >= 0; i--) {
      const e = this.cache[i];
      if (e && commonTokens(e, kv) === e.tokens) this.cache.splice(i, 1);
    }
    this.cache.push(kv);
    return kv.tokens;
  }

  /** prompt_load: the entry that beats the slot's own tokens for `prompt`, taken out of the cache. */
  #load(current: KvContent | undefined, prompt: KvContent): KvContent | undefined {
    const own = current ? commonTokens(current, prompt) : 0;
    let keepBest = own / (current?.tokens ?? 0);
    let simBest = own / prompt.tokens;
    let bestAt = -1;
    this.cache.forEach((e, i) => {
      const common = commonTokens(e, prompt);
      const keep = common / e.tokens;
      const sim = common / prompt.tokens;
      if (keep < 0.25) return;
      if (keepBest < keep && simBest < sim) {
        keepBest = keep;
        simBest = sim;
        bestAt = i;
      }
    });
    if (bestAt < 0) return undefined;
    return this.cache.splice(bestAt, 1)[0];
  }

  #evict(): void {
    let total = this.cachedTokens();
    while (this.cache.length > 1 && total > this.cacheTokens) total -= this.cache.shift()?.tokens ?? 0;
  }
}
