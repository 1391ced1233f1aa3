/**
 * Step "record": count the step's output and remember where the KV now stops (the session's
 * frontier) and the exact bytes and tokens of what was sampled (turn memory, span token memory),
 * so the next request continues live and a replay renders what the KV holds.
 */
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import {
  continuedBlocksDigest,
  headerDigest,
  historyDigest,
  messageDigest,
  messagesBeforeTurn,
} from "../continuation/digest.ts";
import { type SampledTurnRecord, specialSpans } from "../continuation/frontier.ts";
import type { ContinuationPlan } from "../continuation/plan-continuation.ts";
import { alignSpans, type TokenSpan } from "../continuation/sampled-spans.ts";
import { visibleTextKey } from "../continuation/turn-memory.ts";
import { decodeTokens } from "../generate/prompt-tokens.ts";
import type { SampledTurn } from "../generate/sample-turn.ts";
import type { LeasedSession } from "../session/live-session.ts";
import type { PlannedStep, Turn, TurnDeps } from "./turn.ts";

/** Record a sampled step on the turn; a cancelled one leaves no frontier. */
export function record(turn: Turn, planned: PlannedStep, sampled: SampledTurn): void {
  turn.sampled = sampled;
  turn.totals.output += sampled.outputTokens;
  turn.totals.thinking += sampled.thinkingTokens;
  turn.stopReason = sampled.stopReason;
  if (sampled.stopReason !== StopReason.CANCELLED)
    recordTurn(turn.deps, turn.session, planned.plan, planned.promptTokens, sampled);
}

/** Remember where the KV now stops and the exact bytes (and tokens) of the turn, for the next request. */
function recordTurn(
  deps: TurnDeps,
  session: LeasedSession,
  plan: ContinuationPlan,
  promptTokens: number,
  turn: SampledTurn,
): void {
  const sequence = session.sequence;
  const sampledInKv = sequence.tokens.slice(promptTokens);
  const toolUseIds = turn.toolCalls.map((c) => c.id);
  const messages = plan.conversation.messages;
  const messageDigests = messages.map(messageDigest);
  const history = historyDigest(messageDigests.slice(0, messagesBeforeTurn(messages)));
  // The generation prefix's last plain segment plus the sampled text is exactly the plain segment a
  // replay of this turn renders; its tokens are what the KV holds.
  const head = plan.rendered.segments.at(-1);
  const headText = head && !head.special ? head.text : "";
  const lastTurn: SampledTurnRecord = {
    keys: toolUseIds.length > 0 ? toolUseIds : [visibleTextKey(turn.visibleText, history)],
    raw: plan.rendered.generationPrefill + turn.rawText,
    toolUseIds,
    lead: continuedBlocksDigest(messages),
    toolNames: turn.toolCalls.map((c) => c.name),
    spans: sampledSpans(deps, headText, turn),
  };
  session.frontier = {
    text: plan.rendered.text + decodeTokens(deps.engine, sampledInKv),
    tokenCount: sequence.tokens.length,
    toolUseIds,
    messages,
    messageDigests,
    headerDigest: headerDigest(plan.conversation),
    lastTurn,
    controlSpans: { spans: specialSpans(plan.rendered.segments), promptLength: plan.rendered.text.length },
  };
  rememberTurn(deps, session.tenant, lastTurn);
}

/** Put a sampled turn into the exact turn memory and the span token memory. */
export function rememberTurn(deps: Pick<TurnDeps, "memory" | "spans">, tenant: string, turn: SampledTurnRecord): void {
  deps.memory.remember(tenant, turn.keys, { raw: turn.raw, toolUseIds: turn.toolUseIds, lead: turn.lead });
  for (const span of turn.spans) if (span.text) deps.spans.remember(tenant, span.text, span.tokens);
}

/**
 * The plain segments a replay of the turn renders (the prompt's last plain segment and the sampled
 * text, split at sampled control tokens), with the tokens the KV holds for each; one span for the
 * whole text when they do not line up.
 */
function sampledSpans(deps: Pick<TurnDeps, "engine" | "format">, headText: string, turn: SampledTurn): TokenSpan[] {
  const tokens = [...deps.engine.tokenize(headText, { special: false }), ...turn.tokens];
  const text = headText + turn.rawText;
  const aligned = alignSpans(deps.format.splitTurn(text), tokens, (t) => deps.engine.tokenBytes(t));
  return aligned ?? [{ text, tokens }];
}
