/**
 * Conversation detection. A request B continues an earlier request A (is its next turn) when B's hash
 * ids start with all of A's *full* blocks, A has at least MIN_SHARED_BLOCKS full blocks, and B is
 * longer than A. A's last partial block never matches B's (the trace hashes a partial block as its
 * own id), and block 0 alone is the prefix every request in the Mooncake trace shares (a system
 * prompt), so one block says nothing about a conversation. Among several candidates the one sharing
 * the longest prefix wins (the nearest ancestor), then the latest of those (a repeated request's
 * newest copy, the one a client would continue).
 */
import type { TraceRequest } from "./trace-file.ts";

export const MIN_SHARED_BLOCKS = 2;

/** `parents[i]`: the index of the request that request i continues, or undefined for a first turn. */
export function findParents(requests: readonly TraceRequest[], blockTokens: number): (number | undefined)[] {
  const byFullPrefix = new Map<string, number[]>();
  return requests.map((request, i) => {
    let parent: number | undefined;
    let key = "";
    const keys: string[] = [];
    for (const id of request.hashIds) {
      key += `${id},`;
      keys.push(key);
    }
    for (let k = keys.length; k >= MIN_SHARED_BLOCKS && parent === undefined; k--) {
      const candidates = byFullPrefix.get(keys[k - 1] as string) ?? [];
      for (let c = candidates.length - 1; c >= 0; c--) {
        const j = candidates[c] as number;
        if ((requests[j] as TraceRequest).inputLength < request.inputLength) {
          parent = j;
          break;
        }
      }
    }
    const full = Math.floor(request.inputLength / blockTokens);
    if (full >= MIN_SHARED_BLOCKS) {
      const own = keys[full - 1] as string;
      const list = byFullPrefix.get(own);
      if (list) list.push(i);
      else byFullPrefix.set(own, [i]);
    }
    return parent;
  });
}
