/**
 * Which region's pool a new conversation asks first. The home region, as always — unless a worker of
 * another region holds a much longer prefix of the request's prompt (the text-side chain,
 * shared/prefix-chain.ts) and can start the session now: then the prefill that KV saves beats what
 * the transfer costs (every turn of the conversation crossing regions, and the home region's own
 * prefix left unused). "Much longer" is `remotePrefixChars` (PLACEMENT_REMOTE_PREFIX_CHARS, 64k
 * characters by default, ~16k tokens: seconds of prefill even on a GPU, against the tens of
 * milliseconds a turn adds across regions). The other regions keep their order after it.
 */

import { PREFIX_CHUNK_CHARS } from "../../shared/prefix-chain.ts";
import type { RegionConfig } from "../config/pool-config.ts";
import { canStartNow, heldDepth, type PoolWorker, queueFull } from "./placement.ts";

export interface RegionOrderConfig {
  regions: readonly RegionConfig[];
  homeRegion: string;
  remotePrefixChars: number;
}

/** The regions in the order a new session asks their pools (`chain`: the request's, possibly empty). */
export function regionOrder(
  workers: readonly PoolWorker[],
  config: RegionOrderConfig,
  chain: readonly string[],
): RegionConfig[] {
  const regions = [...config.regions];
  if (chain.length === 0 || regions.length < 2) return regions;
  const deepest = new Map<string, number>();
  for (const w of workers) {
    if (w.state !== "up" || queueFull(w) || !canStartNow(w)) continue;
    deepest.set(w.region, Math.max(deepest.get(w.region) ?? -1, heldDepth(w, chain)));
  }
  const home = deepest.get(config.homeRegion) ?? -1;
  const needed = Math.ceil(config.remotePrefixChars / PREFIX_CHUNK_CHARS);
  let best: RegionConfig | undefined;
  let bestDepth = home + needed - 1;
  for (const region of regions) {
    const depth = deepest.get(region.name) ?? -1;
    if (region.name !== config.homeRegion && depth > bestDepth) {
      best = region;
      bestDepth = depth;
    }
  }
  return best ? [best, ...regions.filter((r) => r !== best)] : regions;
}
