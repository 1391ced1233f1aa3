/** The planner's decision and miss reason as the proto enums that carry them to the edge. */
import { CacheDecision, MissReason as WireMissReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { Decision, MissReason } from "./plan-continuation.ts";

const DECISIONS: Record<Decision, CacheDecision> = {
  "live-tool-ids": CacheDecision.LIVE_TOOL_IDS,
  "live-text-prefix": CacheDecision.LIVE_TEXT_PREFIX,
  "live-token-prefix": CacheDecision.LIVE_TOKEN_PREFIX,
  checkpoint: CacheDecision.CHECKPOINT,
  cold: CacheDecision.COLD,
};

const MISS_REASONS: Record<MissReason, WireMissReason> = {
  "": WireMissReason.NONE,
  "no-live-state": WireMissReason.NO_LIVE_STATE,
  "kv-moved": WireMissReason.KV_MOVED,
  "ids-not-live": WireMissReason.IDS_NOT_LIVE,
  "history-edited": WireMissReason.HISTORY_EDITED,
  "text-mismatch": WireMissReason.TEXT_MISMATCH,
  "token-mismatch": WireMissReason.TOKEN_MISMATCH,
  "checkpoint-corrupt": WireMissReason.CHECKPOINT_CORRUPT,
};

export function decisionToWire(decision: Decision): CacheDecision {
  return DECISIONS[decision];
}

export function missReasonToWire(reason: MissReason): WireMissReason {
  return MISS_REASONS[reason];
}
