/**
 * The worker's cache decision and miss reason (proto enums) in the words the `x-frontier-cache`
 * header and the edge's logs use (the same words as the worker's decision log line).
 */
import { CacheDecision, MissReason, type PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

const DECISION_WORDS: Record<CacheDecision, string> = {
  [CacheDecision.UNSPECIFIED]: "unknown",
  [CacheDecision.LIVE_TOOL_IDS]: "live-tool-ids",
  [CacheDecision.LIVE_TEXT_PREFIX]: "live-text-prefix",
  [CacheDecision.LIVE_TOKEN_PREFIX]: "live-token-prefix",
  [CacheDecision.CHECKPOINT]: "checkpoint",
  [CacheDecision.COLD]: "cold",
};

const MISS_WORDS: Record<MissReason, string> = {
  [MissReason.NONE]: "none",
  [MissReason.NO_LIVE_STATE]: "no-live-state",
  [MissReason.KV_MOVED]: "kv-moved",
  [MissReason.IDS_NOT_LIVE]: "ids-not-live",
  [MissReason.HISTORY_EDITED]: "history-edited",
  [MissReason.TEXT_MISMATCH]: "text-mismatch",
  [MissReason.TOKEN_MISMATCH]: "token-mismatch",
  [MissReason.CHECKPOINT_CORRUPT]: "checkpoint-corrupt",
};

export function decisionWord(decision: CacheDecision): string {
  return DECISION_WORDS[decision] ?? "unknown";
}

/** "none" on a full hit. */
export function missWord(reason: MissReason): string {
  return MISS_WORDS[reason] ?? "unknown";
}

/** The `x-frontier-cache` header: `decision=…; miss=…; cached=…; prompt=…`. */
export function cacheHeader(prompt: PromptProcessed): string {
  return `decision=${decisionWord(prompt.decision)}; miss=${missWord(prompt.missReason)}; cached=${prompt.cachedTokens}; prompt=${prompt.promptTokens}`;
}
