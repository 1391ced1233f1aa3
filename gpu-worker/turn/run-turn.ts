/**
 * One Generate call as a Turn: admit (check, lease) → per step: plan (the continuation ladder) →
 * prefill (only what the KV lacks, with keep-alives) → sample (grammar, events) → record (frontier,
 * turn memory), hosted-tool steps looping back to plan → respond (checkpoint hand-off, stop event).
 */
import { type GenerateEvent, type GenerateRequest, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { TurnTrace } from "../metrics/turn-trace.ts";
import { admit, openTurn } from "./admit.ts";
import { announce, plan } from "./plan/plan.ts";
import { prefill } from "./prefill.ts";
import { record } from "./record.ts";
import { handOff, respond } from "./respond.ts";
import { sample } from "./sample.ts";
import { continueWithServerTools } from "./server-tool-steps/server-tool-loop.ts";
import { holdTurnKv } from "./shared-prefix/hold.ts";
import type { Turn, TurnDeps } from "./turn.ts";

/**
 * Run one turn, streaming protocol-neutral events. The session is leased for the whole call, so
 * requests on one session never interleave; it is released at the end, or handed to the checkpoint
 * scheduler when the turn waits on tools.
 */
export async function* runTurn(
  deps: TurnDeps,
  request: GenerateRequest,
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent> {
  const trace = new TurnTrace({ onInterToken: deps.metrics?.interToken });
  const admitted = await admit(deps, request, signal, trace);
  let savingInBackground = false;
  try {
    const turn = await openTurn(deps, request, signal, trace, admitted);
    let step = 0;
    while (yield* runStep(turn, step)) step++;
    trace.sampled();
    holdTurnKv(turn);
    savingInBackground = handOff(turn);
    yield respond(turn);
  } finally {
    if (!savingInBackground) deps.sessions.release(admitted.session);
  }
}

/** One step of the turn; true when a hosted-tool step continues it. */
async function* runStep(turn: Turn, step: number): AsyncGenerator<GenerateEvent, boolean> {
  const planned = await plan(turn, step);
  if (planned === undefined) {
    turn.stopReason = StopReason.MAX_TOKENS;
    return false;
  }
  if (step === 0) yield await announce(turn, planned);
  const promptEnd = yield* prefill(turn, planned);
  const sampled = yield* sample(turn, planned, promptEnd);
  record(turn, planned, sampled);
  return yield* continueWithServerTools(turn, planned, sampled);
}
