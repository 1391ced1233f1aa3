/** Between steps: a generation that made only hosted-tool calls has them run inside the turn, and the turn goes on. */
import { type GenerateEvent, StopReason } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { SampledTurn } from "../../generate/sample-turn.ts";
import { log } from "../../log.ts";
import type { PlannedStep, Turn } from "../turn.ts";
import { runServerStep } from "./server-tool-step.ts";

/** Run the step's hosted calls when they are all it made; true when the next step continues from their results. */
export async function* continueWithServerTools(
  turn: Turn,
  planned: PlannedStep,
  sampled: SampledTurn,
): AsyncGenerator<GenerateEvent, boolean> {
  const { config } = turn.deps;
  const hostedOnly = sampled.toolCalls.length > 0 && sampled.toolCalls.every((c) => c.server);
  if (sampled.stopReason !== StopReason.TOOL_USE || !hostedOnly || !config.serverTools) {
    if (sampled.toolCalls.some((c) => c.server) && sampled.stopReason === StopReason.TOOL_USE) {
      log("server tool calls not run", { reason: "mixed with client tool calls", request: turn.request.requestId });
    }
    return false;
  }
  // The step's calls run inside the turn; the next step continues from their results.
  const added = yield* runServerStep({
    calls: sampled.toolCalls,
    visibleText: sampled.visibleText,
    offered: turn.offered,
    config: config.serverTools,
    uses: turn.uses,
    conversation: planned.conversation,
    signal: turn.signal,
    requestId: turn.request.requestId,
  });
  turn.stepBlocks.push(...added);
  for (const call of sampled.toolCalls) turn.own.add(call.id);
  if (turn.signal.aborted) {
    turn.stopReason = StopReason.CANCELLED;
    return false;
  }
  if (planned.step + 1 >= config.serverTools.maxSteps) {
    // The results are not in the KV yet: the client's resume (the paused turn sent back) ends on
    // them and continues live from this frontier, suffix only.
    turn.stopReason = StopReason.PAUSE_TURN;
    return false;
  }
  return true;
}
