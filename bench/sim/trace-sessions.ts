/**
 * The trace as conversations: a request extends an earlier one when its hash ids start with every
 * full block of that request's input and go past the shared system block (so two conversations that
 * only share the service's system prompt are not one). The parent is the latest such request with
 * the longest match. The prefix fingerprint placement sees (system + tools in production) is the first
 * block: every request of the Mooncake conversation trace starts with the same block 0.
 */
import { PREFIX_CHAIN_DEPTH } from "../../shared/prefix-chain.ts";
import { BLOCK_TOKENS, type TraceRequest } from "../trace/trace-file.ts";

/** A request with what the simulation derives from the trace. */
export interface SimRequest extends TraceRequest {
  /** Rolling key of each block's prefix (ids up to and including it). */
  prefixKeys: readonly string[];
  /** The earlier request this one continues, or -1 for a conversation's first turn. */
  parent: number;
  /** Fingerprint of the system block (what placement calls the prefix). */
  fingerprint: string;
}

/** The key of a prefix extended by one block id: two 32-bit FNV-1a lanes (collisions negligible here). */
export function extendKey(key: string, id: number): string {
  const [a0, b0] = key === "" ? [0x811c9dc5, 0x9e3779b9] : key.split(":").map((h) => Number.parseInt(h, 36));
  let a = a0 ?? 0;
  let b = b0 ?? 0;
  for (let shift = 0; shift < 53; shift += 8) {
    const byte = Math.floor(id / 2 ** shift) & 0xff;
    a = Math.imul(a ^ byte, 0x01000193) >>> 0;
    b = Math.imul(b ^ (byte + 0x55), 0x01000193) >>> 0;
  }
  return `${a.toString(36)}:${b.toString(36)}`;
}

export function prefixKeysOf(hashIds: readonly number[]): string[] {
  const keys: string[] = [];
  let key = "";
  for (const id of hashIds) {
    key = extendKey(key, id);
    keys.push(key);
  }
  return keys;
}

/** Full blocks of a request's input (the last block is partial unless the length is a multiple). */
export function fullBlocks(r: Pick<TraceRequest, "inputLength">, blockTokens = BLOCK_TOKENS): number {
  return Math.floor(r.inputLength / blockTokens);
}

/**
 * The request's stand-in for the text-side prefix chain placement reads (shared/prefix-chain.ts):
 * the system + tools fingerprint, then the key of each further full trace block (a key names its
 * whole prefix, as each chain hash does), at most PREFIX_CHAIN_DEPTH of them.
 */
export function requestChain(r: SimRequest): string[] {
  return [r.fingerprint, ...r.prefixKeys.slice(1, Math.min(fullBlocks(r), PREFIX_CHAIN_DEPTH + 1))];
}

export function deriveSessions(trace: readonly TraceRequest[], blockTokens = BLOCK_TOKENS): SimRequest[] {
  const byFullPrefix = new Map<string, number>();
  return trace.map((r, i) => {
    const prefixKeys = prefixKeysOf(r.hashIds);
    let parent = -1;
    for (let k = prefixKeys.length; k >= 2 && parent < 0; k--) {
      parent = byFullPrefix.get(prefixKeys[k - 1] ?? "") ?? -1;
    }
    const full = fullBlocks(r, blockTokens);
    if (full >= 2) byFullPrefix.set(prefixKeys[full - 1] ?? "", i);
    return { ...r, prefixKeys, parent, fingerprint: `sys-${prefixKeys[0] ?? "none"}` };
  });
}
