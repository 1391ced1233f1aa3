/**
 * The ladder's disk step names an eviction: when the live state is gone and nothing is stored for the
 * session because the store evicted its checkpoint, the miss reason is `checkpoint-evicted`
 * (MISS_REASON_CHECKPOINT_EVICTED on the wire), not a plain `no-live-state`.
 */
import { describe, expect, it } from "vitest";
import type { SessionCheckpoints } from "../../../gpu-worker/checkpoints/session-checkpoints.ts";
import type { EvictionReason } from "../../../gpu-worker/checkpoints/store/budget/checkpoint-tenant-share.ts";
import { missReasonToWire } from "../../../gpu-worker/continuation/decision-wire.ts";
import type { ContinuationPlan } from "../../../gpu-worker/continuation/plan-continuation.ts";
import { withStoredPrefix } from "../../../gpu-worker/turn/plan/stored-prefix.ts";
import type { EngineSequence } from "../../../native/engine-types.ts";
import { missWord } from "../../../shared/cache-decision.ts";

/** Unit logic only: a SessionCheckpoints whose prefix restore finds nothing and whose store knows evictions. */
function checkpointsEvicting(evicted: Map<string, EvictionReason>): SessionCheckpoints {
  return {
    restorePrefix: async () => undefined,
    store: { evictedSession: (tenant: string, sessionId: string) => evicted.get(`${tenant}/${sessionId}`) },
  } as unknown as SessionCheckpoints;
}

const coldPlan = (missReason: ContinuationPlan["missReason"]): ContinuationPlan =>
  ({ keep: 0, append: [1, 2, 3], decision: "cold", missReason, matchedIds: 0 }) as unknown as ContinuationPlan;

const owner = (tenant: string, sessionId: string) => ({ tenant, sessionId, dataKey: undefined });
const sequence = {} as EngineSequence;
const tokenize = async () => [];

describe("checkpoint-evicted miss reason", () => {
  const checkpoints = checkpointsEvicting(new Map([["tenant-a/s-1", "tenant-share"]]));

  it("names the eviction when the live state is gone and the session's checkpoint was evicted", async () => {
    const plan = await withStoredPrefix(
      checkpoints,
      owner("tenant-a", "s-1"),
      coldPlan("no-live-state"),
      sequence,
      tokenize,
    );
    expect(plan.missReason).toBe("checkpoint-evicted");
    expect(missWord(missReasonToWire(plan.missReason))).toBe("checkpoint-evicted");
  });

  it("leaves other sessions, other tenants and other reasons alone", async () => {
    const other = await withStoredPrefix(
      checkpoints,
      owner("tenant-a", "s-2"),
      coldPlan("no-live-state"),
      sequence,
      tokenize,
    );
    expect(other.missReason).toBe("no-live-state");
    const tenant = await withStoredPrefix(
      checkpoints,
      owner("tenant-b", "s-1"),
      coldPlan("no-live-state"),
      sequence,
      tokenize,
    );
    expect(tenant.missReason).toBe("no-live-state");
    const edited = await withStoredPrefix(
      checkpoints,
      owner("tenant-a", "s-1"),
      coldPlan("history-edited"),
      sequence,
      tokenize,
    );
    expect(edited.missReason).toBe("history-edited");
  });
});
