/** What one simulated run counts (pool-sim.ts for Frontier and the baselines, llama-server-sim.ts for llama-server). */
import { BLOCK_TOKENS } from "../trace/trace-file.ts";
import type { SimRequest } from "./trace-sessions.ts";

export type SimPolicy = "frontier" | "round-robin" | "least-loaded" | "llama-server";
export const SIM_POLICIES: readonly SimPolicy[] = ["frontier", "round-robin", "least-loaded", "llama-server"];

export interface SimResult {
  policy: SimPolicy;
  workers: number;
  requests: number;
  served: number;
  /** Refused: queue full (529) or longer than a sequence's context. */
  refused: number;
  inputTokens: number;
  /** Reused input tokens, counted in whole trace blocks (the reading of the trace's ceiling). */
  reusedTokens: number;
  /** Reused tokens when a live or restored session also holds its previous turn's output. */
  reusedWithOutput: number;
  prefilledTokens: number;
  ttftMs: number[];
  /** Wait for a sequence (queue), ms, per served request. */
  queueMs: number[];
  perWorkerRequests: number[];
  perWorkerBusyMs: number[];
  durationMs: number;
  liveHits: number;
  restores: number;
  storedPrefixHits: number;
  /** The shared-prefix rung: prefixes copied from another session's resident sequence / loaded from a checkpoint. */
  sharedFromLive: number;
  sharedFromCheckpoint: number;
  /** Tokens those copies and loads gave (counted in `reusedTokens` too). */
  sharedTokens: number;
  parks: number;
  evictions: number;
  branches: number;
  /** Follow-ups that waited for their parent's running turn instead of branching. */
  waits: number;
  /** Placements of new sessions (frontier policy): on a worker advertising the prefix / by load. */
  placedByPrefix: number;
  placedByLoad: number;
  /** llama-server: slots chosen by common prefix / by LRU, and its host prompt cache's saves and loads. */
  slotsByPrefix: number;
  slotsByLru: number;
  hostCacheSaves: number;
  hostCacheLoads: number;
}

export function newSimResult(policy: SimPolicy, workers: number, requests: number): SimResult {
  return {
    policy,
    workers,
    requests,
    served: 0,
    refused: 0,
    inputTokens: 0,
    reusedTokens: 0,
    reusedWithOutput: 0,
    prefilledTokens: 0,
    ttftMs: [],
    queueMs: [],
    perWorkerRequests: [],
    perWorkerBusyMs: [],
    durationMs: 0,
    liveHits: 0,
    restores: 0,
    storedPrefixHits: 0,
    sharedFromLive: 0,
    sharedFromCheckpoint: 0,
    sharedTokens: 0,
    parks: 0,
    evictions: 0,
    branches: 0,
    waits: 0,
    placedByPrefix: 0,
    placedByLoad: 0,
    slotsByPrefix: 0,
    slotsByLru: 0,
    hostCacheSaves: 0,
    hostCacheLoads: 0,
  };
}

/** What a KV state (live, checkpointed or in a llama-server slot) holds: tokens, and the keys of the full trace blocks among them. */
export interface KvContent {
  tokens: number;
  blockKeys: readonly string[];
  /** The request's input length when recorded (tokens past it are the turn's own output). */
  inputTokens: number;
}

/** Leading trace blocks two block-key lists share. */
export function sharedBlocks(a: readonly string[], b: readonly string[]): number {
  let shared = 0;
  while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared++;
  return shared;
}

/**
 * What a session's KV (live or just restored) gives a request: the leading full blocks they share,
 * and, when the request starts with every full block the KV holds and is at least as long as it, the
 * whole KV (the previous turn's output is then part of this prompt).
 */
export function liveReuse(kv: KvContent | undefined, r: SimRequest): { blocks: number; withOutput: number } {
  if (!kv) return { blocks: 0, withOutput: 0 };
  const shared = sharedBlocks(kv.blockKeys, r.prefixKeys);
  const blocks = shared * BLOCK_TOKENS;
  const extends_ = shared === kv.blockKeys.length && r.inputLength >= kv.tokens;
  return { blocks, withOutput: extends_ ? Math.max(blocks, kv.tokens - 1) : blocks };
}
