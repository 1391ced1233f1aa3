/**
 * Step "plan": the continuation ladder for one step of the turn (live IDs, token prefix, text
 * prefix, then a disk checkpoint), the room left for output, the grammar, and one log line for
 * the decision.
 */
import type { Conversation, GenerateEvent, GenerateRequest } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintIdWithSessionKey } from "../../../shared/ids.ts";
import { decisionToWire, missReasonToWire } from "../../continuation/decision-wire.ts";
import { type ContinuationPlan, planContinuation } from "../../continuation/plan-continuation.ts";
import { WorkerFailure } from "../../errors.ts";
import { generateEvent } from "../../generate/events.ts";
import { log } from "../../log.ts";
import { expandServerTools } from "../../server-tools/expand.ts";
import { checkLastMessage, turnGrammar, withStepBlocks } from "../request.ts";
import { withSharedPrefix } from "../shared-prefix/rung.ts";
import type { PlannedStep, Turn } from "../turn.ts";
import { storedPrefix, withStoredPrefix } from "./stored-prefix.ts";

/** Plan step `step`; undefined when the output budget is spent (a later step only: a first step that does not fit throws). */
export async function plan(turn: Turn, step: number): Promise<PlannedStep | undefined> {
  const { deps, request } = turn;
  const conversation = expandServerTools(withStepBlocks(turn.conversation, turn.stepBlocks), turn.offered, turn.own);
  if (step === 0) checkLastMessage(conversation);
  const plan = await ladder(turn, conversation);
  const promptTokens = plan.keep + plan.append.length;
  const room = Math.min(deps.config.contextSize - 1 - promptTokens, turn.outputBudget - turn.totals.output);
  if (room < 1) {
    if (step === 0) {
      throw WorkerFailure.contextTooLong(
        `prompt is ${promptTokens} tokens; this worker's context holds ${deps.config.contextSize}`,
      );
    }
    return undefined;
  }
  // Built before the decision goes out, so a schema it refuses is the client's HTTP 400.
  const { engine, format, config } = deps;
  const thinkingOpen = plan.rendered.thinkingOpen;
  const grammar = turnGrammar(engine, format, plan.conversation, thinkingOpen, config, request.responseFormat);
  logDecision(request, plan, promptTokens);
  return { step, conversation, plan, promptTokens, room, grammar };
}

/** The first step's plan goes out as the prompt event (the edge reports it in usage and logs). */
export async function announce(turn: Turn, planned: PlannedStep): Promise<GenerateEvent> {
  const { request } = turn;
  const { plan, promptTokens } = planned;
  turn.trace.planned();
  turn.firstPlan = plan;
  turn.totals.cached = plan.keep;
  return generateEvent({
    case: "prompt",
    value: {
      promptTokens,
      cachedTokens: plan.keep,
      decision: decisionToWire(plan.decision),
      missReason: missReasonToWire(plan.missReason),
      messageId: await mintIdWithSessionKey(request.sessionIdKey, turn.ids.message, request.sessionId),
      serverToolsNotOffered: [...turn.offered.notOffered],
    },
  });
}

/**
 * The ladder: the live KV first; then the longest of another conversation's KV of this tenant (or a
 * registered public prefix) and a disk checkpoint, when the live state offers no continuation.
 */
async function ladder(turn: Turn, conversation: Conversation): Promise<ContinuationPlan> {
  const { deps, request, session, trace } = turn;
  const plan = await planContinuation({
    tenant: request.tenantId,
    conversation,
    format: deps.format,
    memory: deps.memory,
    frontier: session.frontier,
    liveTokens: session.sequence.tokens,
    tokenize: turn.tokenize,
  });
  const checkpoints = deps.checkpoints;
  if (plan.decision === "live-tool-ids" || plan.decision === "live-text-prefix") return plan;
  if (checkpoints) await trace.during("ladder", () => checkpoints.refresh(request.tenantId, request.sessionId));
  const stored = checkpoints ? storedPrefix(checkpoints, session, plan) : undefined;
  const shared = await trace.during("ladder", () => withSharedPrefix(turn, plan, stored?.meta?.tokenCount ?? 0));
  if (!checkpoints || shared.decision === "shared-prefix" || shared.decision === "public-prefix") return shared;
  const { sequence } = session;
  return trace.during("ladder", () => withStoredPrefix(checkpoints, session, shared, sequence, turn.tokenize, stored));
}

function logDecision(request: GenerateRequest, plan: ContinuationPlan, promptTokens: number): void {
  const fields = {
    cached: plan.keep,
    prompt: promptTokens,
    session: request.sessionId.slice(0, 8),
    request: request.requestId,
  };
  if (plan.decision === "live-tool-ids") {
    log("live continuation", { match: "tool-output-ids", ids: plan.matchedIds, ...fields });
  } else if (plan.decision === "cold") {
    log("live kv cache miss", { reason: plan.missReason, decision: "cold", ...fields });
  } else {
    log("live continuation", { match: plan.decision, miss: plan.missReason || undefined, ...fields });
  }
}
