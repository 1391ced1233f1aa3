/**
 * The simulated worker's shared-prefix rung (gpu-worker/turn/shared-prefix/rung.ts, in trace blocks):
 * when the ladder's other rungs offer less, copy into the session's sequence the longest prefix of
 * the request that another KV on this worker holds — an idle session's resident sequence (a sequence
 * copy) or a stored checkpoint (loaded whole, then cut) — found through the worker's
 * `SharedPrefixIndex` and checked against the holder's blocks before it is used. The simulation has one
 * tenant (the trace), so every holder is the request's tenant. A busy holder is skipped (the real rung
 * reads a sequence only while idle); one whose KV is gone (parked, evicted) is dropped and the index
 * asked again.
 */
import { DEFAULT_BLOCK_TOKENS } from "../../gpu-worker/continuation/shared-prefix/options.ts";
import { BLOCK_TOKENS } from "../trace/trace-file.ts";
import { type KvContent, sharedBlocks } from "./sim-result.ts";
import { holderKey, type SimPrefixHolder, type SimWorker } from "./sim-worker.ts";
import { fullBlocks, type SimRequest } from "./trace-sessions.ts";

/**
 * How many tokens more than the other rungs a shared prefix must give (FRONTIER_PREFIX_MIN_TOKENS,
 * the worker's default: one of its 256-token blocks).
 */
export const SHARED_MIN_TOKENS = DEFAULT_BLOCK_TOKENS;

/** Index lookups one request makes at most (each after dropping holders whose KV is gone), as the real rung. */
const MAX_LOOKUPS = 3;

export interface SharedCopy {
  /** Tokens of the request the copy gives (whole trace blocks, at most the prompt less its last token). */
  tokens: number;
  from: SimPrefixHolder["kind"];
  /** Tokens the engine moves: the copied prefix (live), or the whole checkpoint it loads before cutting. */
  movedTokens: number;
}

/** Resident sequences first (a copy in memory), then checkpoints (a load); newest first within each. */
function ordered(holders: readonly SimPrefixHolder[]): SimPrefixHolder[] {
  return [...holders.filter((h) => h.kind === "live"), ...holders.filter((h) => h.kind !== "live")];
}

type Resolved = { kind: "held"; kv: KvContent } | { kind: "busy" } | { kind: "gone" };

function resolve(w: SimWorker, holder: SimPrefixHolder): Resolved {
  if (holder.kind === "checkpoint") {
    const kv = w.storedKv(holder.id);
    return kv ? { kind: "held", kv } : { kind: "gone" };
  }
  const session = w.sessions.get(holder.sessionId);
  const kv = w.content.get(holder.sessionId);
  if (!session?.sequence || !kv) return { kind: "gone" };
  return session.busy ? { kind: "busy" } : { kind: "held", kv };
}

/**
 * The copy the rung makes for `r` in session `sessionId`, when some other holder on `w` gives at
 * least `floor` tokens of it; undefined otherwise. `now`: the checkpoint used is touched then.
 */
export function sharedPrefixCopy(
  w: SimWorker,
  r: SimRequest,
  sessionId: string,
  floor: number,
  now: number,
): SharedCopy | undefined {
  // The prompt's last token stays out: the first sampling decode evaluates it.
  const limit = r.inputLength - 1;
  if (limit < floor) return undefined;
  const chain = r.prefixKeys.slice(0, fullBlocks(r));
  for (let round = 0; round < MAX_LOOKUPS; round++) {
    const match = w.shared.lookup(chain);
    let dropped = false;
    for (const holder of ordered(match?.refs ?? [])) {
      if (holder.kind === "live" && holder.sessionId === sessionId) continue;
      const held = resolve(w, holder);
      if (held.kind === "busy") continue;
      if (held.kind === "gone") {
        dropped = w.shared.drop(holderKey(holder)) || dropped;
        continue;
      }
      const tokens = Math.min(sharedBlocks(held.kv.blockKeys, chain) * BLOCK_TOKENS, limit);
      if (tokens < floor) continue;
      w.shared.touch(holderKey(holder));
      if (holder.kind === "checkpoint") w.touchCheckpoint(holder.id, now);
      return { tokens, from: holder.kind, movedTokens: holder.kind === "live" ? tokens : held.kv.tokens };
    }
    if (!dropped) break;
  }
  return undefined;
}
