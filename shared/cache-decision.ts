/**
 * The worker's cache decision and miss reason: the proto enums on the wire and the one table of
 * their words (the worker's planner and decision log line, the edge's `x-frontier-cache` header,
 * logs and metrics). Both sides map through here, so a new enum value is named once.
 */
import { CacheDecision, MissReason } from "../proto/gen/frontier/worker/v1/worker_pb.ts";

const DECISION_WORDS = {
  [CacheDecision.UNSPECIFIED]: "unknown",
  [CacheDecision.LIVE_TOOL_IDS]: "live-tool-ids",
  [CacheDecision.LIVE_TEXT_PREFIX]: "live-text-prefix",
  [CacheDecision.LIVE_TOKEN_PREFIX]: "live-token-prefix",
  [CacheDecision.CHECKPOINT]: "checkpoint",
  [CacheDecision.COLD]: "cold",
  [CacheDecision.SHARED_PREFIX]: "shared-prefix",
  [CacheDecision.PUBLIC_PREFIX]: "public-prefix",
} as const satisfies Record<CacheDecision, string>;

const MISS_WORDS = {
  [MissReason.NONE]: "none",
  [MissReason.NO_LIVE_STATE]: "no-live-state",
  [MissReason.KV_MOVED]: "kv-moved",
  [MissReason.IDS_NOT_LIVE]: "ids-not-live",
  [MissReason.HISTORY_EDITED]: "history-edited",
  [MissReason.TEXT_MISMATCH]: "text-mismatch",
  [MissReason.TOKEN_MISMATCH]: "token-mismatch",
  [MissReason.CHECKPOINT_CORRUPT]: "checkpoint-corrupt",
  [MissReason.CHECKPOINT_KEY]: "checkpoint-key",
  [MissReason.CHECKPOINT_EVICTED]: "checkpoint-evicted",
  [MissReason.PREFIX_STALE]: "prefix-stale",
  [MissReason.PREFIX_BUSY]: "prefix-busy",
} as const satisfies Record<MissReason, string>;

/** A decision the planner can make (every value but UNSPECIFIED). */
export type DecisionWord = Exclude<(typeof DECISION_WORDS)[CacheDecision], "unknown">;
/** A miss reason, "none" on a full hit. */
export type MissWord = (typeof MISS_WORDS)[MissReason];

const DECISION_OF = invert(DECISION_WORDS) as Record<DecisionWord, CacheDecision>;
const MISS_OF = invert(MISS_WORDS) as Record<MissWord, MissReason>;

export function decisionWord(decision: CacheDecision): string {
  return DECISION_WORDS[decision] ?? "unknown";
}

/** "none" on a full hit. */
export function missWord(reason: MissReason): string {
  return MISS_WORDS[reason] ?? "unknown";
}

export function decisionOf(word: DecisionWord): CacheDecision {
  return DECISION_OF[word];
}

export function missReasonOf(word: MissWord): MissReason {
  return MISS_OF[word];
}

function invert<K extends number, V extends string>(table: Record<K, V>): Record<V, K> {
  return Object.fromEntries(Object.entries(table).map(([key, word]) => [word, Number(key)])) as Record<V, K>;
}
