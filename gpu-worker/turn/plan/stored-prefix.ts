/** Ladder step "disk checkpoint": a stored prefix longer than what the live KV offers. */
import type { EngineSequence, Token } from "../../../native/engine-types.ts";
import type { PromptSegment } from "../../chat/types.ts";
import type { KeyedOwner } from "../../checkpoints/checkpointed-session.ts";
import type { SessionCheckpoints } from "../../checkpoints/session-checkpoints.ts";
import type { CheckpointMeta } from "../../checkpoints/store/types.ts";
import type { ContinuationPlan } from "../../continuation/plan-continuation.ts";

/**
 * Restore the longest checkpoint of this tenant whose text is a prefix of the rendered request,
 * when it covers more than the plan keeps; the plan then continues from it.
 */
export async function withStoredPrefix(
  checkpoints: SessionCheckpoints,
  owner: KeyedOwner & { readonly sessionId: string },
  plan: ContinuationPlan,
  sequence: EngineSequence,
  tokenize: (segments: readonly PromptSegment[]) => Promise<Token[]>,
  found?: StoredPrefix,
): Promise<ContinuationPlan> {
  const looked = found && found.keep === plan.keep ? { meta: found.meta } : undefined;
  const restored = await checkpoints.restorePrefix(owner, plan.rendered, sequence, plan.keep, tokenize, looked);
  if (restored === undefined) return withEvictionMiss(checkpoints, owner, plan);
  // The request's data key does not open it: nothing was loaded, the live plan stands.
  if (restored === "wrong-key") return { ...plan, missReason: "checkpoint-key" };
  if (restored === "corrupt") {
    // The failed load cleared the sequence: whatever the live KV offered is gone.
    return {
      ...plan,
      keep: 0,
      append: await tokenize(plan.rendered.segments),
      decision: "cold",
      missReason: "checkpoint-corrupt",
    };
  }
  return { ...plan, keep: restored.keep, append: restored.append, decision: "checkpoint" };
}

/** The disk rung's lookup for a plan (the checkpoint it would restore, for the plan's `keep`). */
export interface StoredPrefix {
  readonly keep: number;
  readonly meta: CheckpointMeta | undefined;
}

/** The checkpoint the disk rung would restore for this plan; undefined without a key to look one up with. */
export function storedPrefix(
  checkpoints: SessionCheckpoints,
  owner: KeyedOwner,
  plan: ContinuationPlan,
): StoredPrefix | undefined {
  const key = owner.dataKey;
  if (!key) return undefined;
  const meta = checkpoints.store.findLongestPrefix(key, plan.rendered.text, { minTokens: plan.keep + 1 });
  return { keep: plan.keep, meta };
}

/** Live state gone and nothing stored: say so when the store evicted this session's checkpoint. */
const LIVE_GONE: readonly ContinuationPlan["missReason"][] = ["no-live-state", "kv-moved", "ids-not-live"];

function withEvictionMiss(
  checkpoints: SessionCheckpoints,
  owner: { readonly tenant: string; readonly sessionId: string },
  plan: ContinuationPlan,
): ContinuationPlan {
  if (plan.decision !== "cold" || !LIVE_GONE.includes(plan.missReason)) return plan;
  const evicted = checkpoints.store.evictedSession?.(owner.tenant, owner.sessionId);
  return evicted ? { ...plan, missReason: "checkpoint-evicted" } : plan;
}
