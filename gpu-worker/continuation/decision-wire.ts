/** The planner's decision and miss reason as the proto enums that carry them to the edge (one table: shared/cache-decision.ts). */
import type { CacheDecision, MissReason as WireMissReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionOf, missReasonOf } from "../../shared/cache-decision.ts";
import type { Decision, MissReason } from "./plan-continuation.ts";

export function decisionToWire(decision: Decision): CacheDecision {
  return decisionOf(decision);
}

/** The planner's "" (no miss) is the table's "none". */
export function missReasonToWire(reason: MissReason): WireMissReason {
  return missReasonOf(reason === "" ? "none" : reason);
}
