import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { TurnPhases } from "./turn-trace.ts";
import type { FinishedReason, FinishedTurn } from "./worker-metrics.ts";

/** A finished turn's facts for the metrics, from the plan, the sampled turn and its phases. */
export function finishedTurn(
  plan: { decision: string; missReason: string; keep: number; append: readonly unknown[] },
  promptTokens: number,
  turn: { outputTokens: number; stopReason: StopReason },
  phases: TurnPhases,
): FinishedTurn {
  return {
    decision: plan.decision,
    missReason: plan.missReason,
    promptTokens,
    cachedTokens: plan.keep,
    prefilledTokens: plan.append.length,
    outputTokens: turn.outputTokens,
    finishedReason: finishedReason(turn.stopReason),
    phases,
  };
}

/** vLLM's finished_reason: the model stopped, the budget ran out, or the client went away. */
function finishedReason(reason: StopReason): FinishedReason {
  switch (reason) {
    case StopReason.MAX_TOKENS:
      return "length";
    case StopReason.CANCELLED:
      return "abort";
    case StopReason.END_TURN:
    case StopReason.TOOL_USE:
    case StopReason.PAUSE_TURN:
    case StopReason.STOP_SEQUENCE:
    case StopReason.UNSPECIFIED:
      return "stop";
    default:
      return checkNever(reason);
  }
}

function checkNever(value: never): never {
  throw new Error(`unhandled stop reason ${String(value)}`);
}
