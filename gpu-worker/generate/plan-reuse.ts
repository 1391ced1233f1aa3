import type { Token } from "../../native/engine-types.ts";

/** How much of a sequence's live KV a new prompt can keep. */
export interface ReusePlan {
  /** Tokens of the live KV kept (a prefix of the prompt). At most prompt.length - 1: sampling needs one fed token. */
  reuse: number;
  decision: "cold" | "live-token-prefix";
  /** Why the live KV was not (fully) reused; empty on a full hit. */
  missReason: "" | "no-live-state" | "token-mismatch";
}

/** Ladder step "exact token prefix": keep the longest common token prefix of live KV and prompt. */
export function planTokenPrefixReuse(live: readonly Token[], prompt: readonly Token[]): ReusePlan {
  if (live.length === 0) return { reuse: 0, decision: "cold", missReason: "no-live-state" };
  let common = 0;
  const limit = Math.min(live.length, prompt.length);
  while (common < limit && live[common] === prompt[common]) common++;
  const reuse = Math.min(common, Math.max(0, prompt.length - 1));
  if (reuse === 0) return { reuse: 0, decision: "cold", missReason: "token-mismatch" };
  return { reuse, decision: "live-token-prefix", missReason: common < live.length ? "token-mismatch" : "" };
}
