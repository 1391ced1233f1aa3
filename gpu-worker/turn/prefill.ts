/**
 * Step "prefill": cut the KV back to what the plan keeps and evaluate the rest of the prompt in
 * batches, with keep-alive events during long prefills; a cold first step saves an anchor
 * checkpoint at the end of system + tools on the way (the turn waits only for the KV dump).
 */
import type { EngineSequence, Token } from "../../native/engine-types.ts";
import type { GenerateEvent } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerConfig } from "../config.ts";
import type { ContinuationPlan } from "../continuation/plan-continuation.ts";
import { generateEvent } from "../generate/events.ts";
import { publicSavePoint } from "./shared-prefix/public-save-point.ts";
import type { PlannedStep, Turn } from "./turn.ts";

/** Prefill the step's prompt; returns its held-back end, which the first sampling decode evaluates. */
export async function* prefill(turn: Turn, planned: PlannedStep): AsyncGenerator<GenerateEvent, Token[]> {
  const { deps, session, signal, trace } = turn;
  const { plan, step } = planned;
  const sequence = session.sequence;
  session.frontier = undefined;
  await sequence.truncate(plan.keep);
  const points = step === 0 ? await savePoints(turn, plan) : [];
  // The prompt's last token is held back for the first sampling decode, which evaluates it
  // anyway: prefilling it too would decode it twice. A save point that ends there needs it in the KV.
  const atEnd = points.some((p) => p.at >= plan.append.length);
  const holdBack = plan.append.length > 0 && !atEnd ? 1 : 0;
  const toPrefill = plan.append.slice(0, plan.append.length - holdBack);
  const promptEnd = plan.append.slice(toPrefill.length);
  let done = 0;
  for (const point of points) {
    yield* prefillTokens(deps.config, sequence, toPrefill.slice(done, point.at), signal);
    done = point.at;
    await trace.during("anchor", point.save);
  }
  yield* prefillTokens(deps.config, sequence, toPrefill.slice(done), signal);
  turn.totals.input += plan.append.length;
  if (step === 0) trace.prefilled();
  return promptEnd;
}

/** A state saved on the way when the prefill reaches `at` tokens of the plan's append. */
interface SavePoint {
  readonly at: number;
  readonly save: () => Promise<void>;
}

/**
 * Where this prefill saves state on its way, in order: a cold first step's anchor at the end of
 * system + tools (the tenant's, sealed), and a registered public prefix's state when none is saved yet.
 */
async function savePoints(turn: Turn, plan: ContinuationPlan): Promise<SavePoint[]> {
  const { deps, session } = turn;
  const points: SavePoint[] = [];
  const checkpoints = deps.checkpoints;
  const anchor =
    plan.decision === "cold" && checkpoints
      ? await checkpoints.anchors.anchorFor(session, plan.rendered, turn.tokenize)
      : undefined;
  if (anchor && checkpoints && anchor.tokens <= plan.append.length) {
    points.push({
      at: anchor.tokens,
      save: () => checkpoints.anchors.saveAnchor(session, anchor.text, session.sequence),
    });
  }
  const requestTokens = [...session.sequence.tokens.slice(0, plan.keep), ...plan.append];
  const publicPoint = deps.shared ? await publicSavePoint(deps.shared, plan, requestTokens, turn.tokenize) : undefined;
  if (publicPoint && publicPoint.tokens >= plan.keep && publicPoint.tokens - plan.keep <= plan.append.length) {
    const shared = deps.shared;
    points.push({
      at: publicPoint.tokens - plan.keep,
      save: async () => shared?.publicStates.save(publicPoint.prefix, session.sequence),
    });
  }
  return points.sort((a, b) => a.at - b.at);
}

async function* prefillTokens(
  config: Pick<WorkerConfig, "batchSize" | "keepAliveMs">,
  sequence: EngineSequence,
  tokens: readonly Token[],
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent> {
  const chunk = Math.max(1, config.batchSize);
  let last = Date.now();
  for (let done = 0; done < tokens.length; done += chunk) {
    if (signal.aborted) throw signal.reason ?? new Error("cancelled");
    await sequence.append(tokens.slice(done, done + chunk), { signal });
    if (Date.now() - last >= config.keepAliveMs && done + chunk < tokens.length) {
      last = Date.now();
      yield generateEvent({ case: "keepAlive", value: { prefilledTokens: done + chunk, totalTokens: tokens.length } });
    }
  }
}
