/**
 * The capacity-bound ceiling: the prefix reuse of one ideal cache holding the whole pool's KV
 * (every worker's sequences × context plus its checkpoint budget) as 512-token blocks, least recently
 * used first out, with perfect routing. The same reading as the trace's infinite-cache ceiling (whole
 * earlier prefixes only, no own output); with capacity ≥ the trace's blocks it equals that ceiling.
 */
import { BLOCK_TOKENS } from "../trace/trace-file.ts";
import type { SimRequest } from "./trace-sessions.ts";

export function capacityCeiling(requests: readonly SimRequest[], capacityTokens: number): number {
  const capacityBlocks = Math.floor(capacityTokens / BLOCK_TOKENS);
  const lru = new Map<string, true>();
  let input = 0;
  let reused = 0;
  for (const r of requests) {
    input += r.inputLength;
    let missed = false;
    for (let b = 0; b < r.prefixKeys.length; b++) {
      const key = r.prefixKeys[b] ?? "";
      const tokens = Math.min(BLOCK_TOKENS, r.inputLength - b * BLOCK_TOKENS);
      if (!missed && lru.has(key)) reused += tokens;
      else missed = true;
      lru.delete(key);
      lru.set(key, true);
    }
    while (lru.size > capacityBlocks) {
      const oldest = lru.keys().next().value;
      if (oldest === undefined) break;
      lru.delete(oldest);
    }
  }
  return input === 0 ? 0 : reused / input;
}
