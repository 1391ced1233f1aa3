/** The shared-prefix rung's settings, from the worker's environment (gpu-worker/config.ts reads them here). */
import { type PublicPrefix, parsePublicPrefixes } from "./public-prefixes.ts";

export interface SharedPrefixOptions {
  /** FRONTIER_SHARED_PREFIX (on | off, default on): the ladder's shared-prefix and public-prefix rungs. */
  enabled: boolean;
  /** FRONTIER_PREFIX_BLOCK_TOKENS (default 256): tokens per hashed block of the index. */
  blockTokens: number;
  /** FRONTIER_PREFIX_INDEX_BLOCKS (default 65536): distinct blocks the index remembers (LRU past it). */
  indexBlocks: number;
  /**
   * FRONTIER_PREFIX_MIN_TOKENS (default: one block): a shared prefix is copied only when it covers at
   * least this many tokens more than the rest of the ladder offers.
   */
  minTokens: number;
  /** FRONTIER_PUBLIC_PREFIXES: the operator's public prefixes (public-prefixes.ts). */
  publicPrefixes: PublicPrefix[];
}

export const DEFAULT_BLOCK_TOKENS = 256;
const DEFAULT_INDEX_BLOCKS = 65_536;

export function loadSharedPrefixOptions(env: NodeJS.ProcessEnv): SharedPrefixOptions {
  const enabled = env.FRONTIER_SHARED_PREFIX ?? "on";
  if (enabled !== "on" && enabled !== "off" && enabled !== "")
    throw new Error(`FRONTIER_SHARED_PREFIX must be "on" or "off", got "${enabled}"`);
  const blockTokens = positive(env, "FRONTIER_PREFIX_BLOCK_TOKENS", DEFAULT_BLOCK_TOKENS);
  return {
    enabled: enabled !== "off",
    blockTokens,
    indexBlocks: positive(env, "FRONTIER_PREFIX_INDEX_BLOCKS", DEFAULT_INDEX_BLOCKS),
    minTokens: positive(env, "FRONTIER_PREFIX_MIN_TOKENS", blockTokens),
    publicPrefixes: parsePublicPrefixes(env.FRONTIER_PUBLIC_PREFIXES),
  };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}
