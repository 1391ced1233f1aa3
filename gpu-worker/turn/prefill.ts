/**
 * Step "prefill": cut the KV back to what the plan keeps and evaluate the rest of the prompt in
 * batches, with keep-alive events during long prefills; a cold first step saves an anchor
 * checkpoint at the end of system + tools on the way (the turn waits only for the KV dump).
 */
import type { EngineSequence, Token } from "../../native/engine-types.ts";
import type { GenerateEvent } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerConfig } from "../config.ts";
import { generateEvent } from "../generate/events.ts";
import type { PlannedStep, Turn } from "./turn.ts";

/** Prefill the step's prompt; returns its held-back end, which the first sampling decode evaluates. */
export async function* prefill(turn: Turn, planned: PlannedStep): AsyncGenerator<GenerateEvent, Token[]> {
  const { deps, session, signal, trace } = turn;
  const { plan, step } = planned;
  const sequence = session.sequence;
  session.frontier = undefined;
  await sequence.truncate(plan.keep);
  const anchor =
    step === 0 && plan.decision === "cold"
      ? await deps.checkpoints?.anchors.anchorFor(session, plan.rendered, turn.tokenize)
      : undefined;
  // The prompt's last token is held back for the first sampling decode, which evaluates it
  // anyway: prefilling it too would decode it twice. An anchor that ends there needs it in the KV.
  const holdBack = plan.append.length > 0 && (anchor === undefined || anchor.tokens < plan.append.length) ? 1 : 0;
  const toPrefill = plan.append.slice(0, plan.append.length - holdBack);
  const promptEnd = plan.append.slice(toPrefill.length);
  if (anchor && deps.checkpoints) {
    const checkpoints = deps.checkpoints;
    yield* prefillTokens(deps.config, sequence, toPrefill.slice(0, anchor.tokens), signal);
    // The turn waits for the engine's dump of the anchor's KV only; its durability lands in the background.
    await trace.during("anchor", () => checkpoints.anchors.saveAnchor(session, anchor.text, sequence));
    yield* prefillTokens(deps.config, sequence, toPrefill.slice(anchor.tokens), signal);
  } else {
    yield* prefillTokens(deps.config, sequence, toPrefill, signal);
  }
  turn.totals.input += plan.append.length;
  if (step === 0) trace.prefilled();
  return promptEnd;
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
