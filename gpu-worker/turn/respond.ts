/**
 * The turn's end: hand a turn that waits on tools to the checkpoint scheduler, log the finished
 * turn, record its metrics, and build the stop event with the usage.
 */
import { type GenerateEvent, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { generateEvent } from "../generate/events.ts";
import { log } from "../log.ts";
import { finishedTurn } from "../metrics/finished-turn.ts";
import type { Turn } from "./turn.ts";

/** Release a turn that waits on tools with its checkpoint scheduled; true when the session was released so. */
export function handOff(turn: Turn): boolean {
  const waiting = turn.stopReason === StopReason.TOOL_USE || turn.stopReason === StopReason.PAUSE_TURN;
  if (!waiting || !turn.deps.checkpoints) return false;
  // Releases the session and schedules its checkpoint off the critical path: the most valuable
  // one, keyed to the tool IDs, so the tool results can continue even if the live state is
  // parked, lost or moved meanwhile (a tool result arriving first cancels it and runs live).
  turn.deps.sessions.saveInBackground(turn.session, "tool-frontier");
  return true;
}

/** Step "respond": the "turn finished" line, the turn's metrics, and the stop event. */
export function respond(turn: Turn): GenerateEvent {
  const { request, firstPlan, sampled, totals, uses, trace } = turn;
  const promptTokens = firstPlan ? firstPlan.keep + firstPlan.append.length : 0;
  log("turn finished", {
    stop: StopReason[turn.stopReason],
    decision: firstPlan?.decision,
    prompt: promptTokens,
    cached: totals.cached,
    output: totals.output,
    tools: sampled?.toolCalls.length ?? 0,
    searches: uses.webSearch || undefined,
    fetches: uses.webFetch || undefined,
    kv: turn.session.sequence.tokens.length,
    ...trace.logFields(),
    session: request.sessionId.slice(0, 8),
    request: request.requestId,
  });
  if (firstPlan && sampled)
    turn.deps.metrics?.turnFinished(finishedTurn(firstPlan, promptTokens, sampled, trace.phases()));
  return generateEvent({
    case: "stop",
    value: {
      reason: turn.stopReason,
      stopSequence: sampled?.stopSequence ?? "",
      usage: {
        inputTokens: totals.input,
        cachedTokens: totals.cached,
        outputTokens: totals.output,
        thinkingTokens: totals.thinking,
        webSearchRequests: uses.webSearch,
        webFetchRequests: uses.webFetch,
      },
    },
  });
}
