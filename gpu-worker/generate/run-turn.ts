import type { Engine, EngineSequence, Token } from "../../native/engine-types.ts";
import {
  type ContentBlock,
  type Conversation,
  type GenerateEvent,
  type GenerateRequest,
  StopReason,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { isSessionId, mintId } from "../../shared/ids.ts";
import { signThinking } from "../../shared/thinking-signature.ts";
import type { ChatFormat, PromptSegment } from "../chat/types.ts";
import type { WorkerConfig } from "../config.ts";
import { decisionToWire, missReasonToWire } from "../continuation/decision-wire.ts";
import { continuedBlocksDigest, headerDigest, messageDigest } from "../continuation/digest.ts";
import { type SampledTurnRecord, specialSpans } from "../continuation/frontier.ts";
import { type ContinuationPlan, planContinuation } from "../continuation/plan-continuation.ts";
import { alignSpans, type TokenSpan } from "../continuation/sampled-spans.ts";
import type { SpanTokenMemory } from "../continuation/span-token-memory.ts";
import { withStoredPrefix } from "../continuation/stored-prefix.ts";
import { type TurnMemory, visibleTextKey } from "../continuation/turn-memory.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";
import { finishedTurn } from "../metrics/finished-turn.ts";
import { TurnTrace } from "../metrics/turn-trace.ts";
import type { WorkerMetrics } from "../metrics/worker-metrics.ts";
import { offerServerTools } from "../server-tools/declarations.ts";
import { expandServerTools, ownServerCallIds } from "../server-tools/expand.ts";
import type { SessionCheckpoints } from "../session/session-checkpoints.ts";
import type { LeasedSession, SessionTable } from "../session/session-table.ts";
import { generateEvent } from "./events.ts";
import { decodeTokens, tokenizeSegments } from "./prompt-tokens.ts";
import { type SampledTurn, sampleTurn } from "./sample-turn.ts";
import { runServerStep, ServerToolUses } from "./server-tool-step.ts";
import { checkConversation, checkLastMessage, idKinds, turnGrammar, withStepBlocks } from "./turn-request.ts";

export interface TurnDeps {
  engine: Engine;
  format: ChatFormat;
  sessions: SessionTable;
  memory: TurnMemory;
  spans: SpanTokenMemory;
  /** The disk checkpoint store (ladder step "disk checkpoint", anchors, tool-frontier saves). */
  checkpoints: SessionCheckpoints | undefined;
  config: WorkerConfig;
  /** Prometheus metrics (undefined: not recorded). */
  metrics?: WorkerMetrics | undefined;
}

/** Default output budget when a request leaves it to the worker. */
const DEFAULT_MAX_TOKENS = 4096;

/**
 * One Generate call: plan the continuation (the ladder), prefill only what the KV lacks (with
 * keep-alives), sample, stream protocol-neutral events, and record the new frontier and the exact
 * turn. The session is leased for the whole call, so requests on one session never interleave.
 */
export async function* runTurn(
  deps: TurnDeps,
  request: GenerateRequest,
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent> {
  const { engine, format, config } = deps;
  const trace = new TurnTrace({ onInterToken: deps.metrics?.interToken });
  const conversation = checkConversation(request);
  const ids = idKinds(request);
  if (!isSessionId(request.sessionId))
    throw WorkerFailure.invalid("session_id must be 32 hex characters", "session_id");
  const offered = offerServerTools(request.conversation?.serverTools ?? [], config.serverTools);
  if (offered.notOffered.length > 0)
    log("server tools not offered", { tools: offered.notOffered.join(","), request: request.requestId });
  const session = await trace.during("lease", () => deps.sessions.lease(request.tenantId, request.sessionId));
  let savingInBackground = false;
  try {
    const sequence = session.sequence;
    const tokenize = (segments: readonly PromptSegment[]) =>
      tokenizeSegments(engine, segments, (text) => deps.spans.recall(request.tenantId, text));
    const serverTools =
      offered.byName.size > 0
        ? {
            names: new Set(offered.byName.keys()),
            mintId: () => mintId(config.idSecret, ids.serverToolCall, request.tenantId, request.sessionId),
          }
        : undefined;
    const uses = new ServerToolUses();
    /** Hosted calls Frontier ran: replayed ones (their IDs verify) and this turn's. */
    const own = await ownServerCallIds(conversation, config.idSecret, request.tenantId);
    /** The client's view of the turn so far (hosted-tool steps append to it). */
    const stepBlocks: ContentBlock[] = [];
    const totals = { input: 0, output: 0, cached: 0 };
    const outputBudget = request.sampling?.maxTokens || DEFAULT_MAX_TOKENS;
    let firstPlan: ContinuationPlan | undefined;
    let turn: SampledTurn | undefined;
    let stopReason: StopReason = StopReason.END_TURN;
    for (let step = 0; ; step++) {
      const stepConversation = expandServerTools(withStepBlocks(conversation, stepBlocks), offered, own);
      if (step === 0) checkLastMessage(stepConversation);
      let plan = await planContinuation({
        tenant: request.tenantId,
        conversation: stepConversation,
        format,
        memory: deps.memory,
        frontier: session.frontier,
        liveTokens: sequence.tokens,
        tokenize,
      });
      if (deps.checkpoints && plan.decision !== "live-tool-ids" && plan.decision !== "live-text-prefix") {
        const checkpoints = deps.checkpoints;
        await trace.during("ladder", () => checkpoints.refresh(request.tenantId, request.sessionId));
        plan = await trace.during("ladder", () =>
          withStoredPrefix(checkpoints, request.tenantId, plan, sequence, tokenize),
        );
      }
      const promptTokens = plan.keep + plan.append.length;
      const room = Math.min(config.contextSize - 1 - promptTokens, outputBudget - totals.output);
      if (room < 1) {
        if (step === 0) {
          throw WorkerFailure.contextTooLong(
            `prompt is ${promptTokens} tokens; this worker's context holds ${config.contextSize}`,
          );
        }
        stopReason = StopReason.MAX_TOKENS;
        break;
      }
      const thinkingOpen = plan.rendered.thinkingOpen;
      // Built before the decision goes out, so a schema it refuses is the client's HTTP 400.
      const grammar = turnGrammar(engine, format, plan.conversation, thinkingOpen, config, request.responseFormat);
      logDecision(request, plan, promptTokens);
      if (step === 0) {
        trace.planned();
        firstPlan = plan;
        totals.cached = plan.keep;
        yield generateEvent({
          case: "prompt",
          value: {
            promptTokens,
            cachedTokens: plan.keep,
            decision: decisionToWire(plan.decision),
            missReason: missReasonToWire(plan.missReason),
            messageId: await mintId(config.idSecret, ids.message, request.tenantId, request.sessionId),
            serverToolsNotOffered: [...offered.notOffered],
          },
        });
      }
      session.frontier = undefined;
      await sequence.truncate(plan.keep);
      const anchor =
        step === 0 && plan.decision === "cold"
          ? await deps.checkpoints?.anchorFor(request.tenantId, plan.rendered, tokenize)
          : undefined;
      // The prompt's last token is held back for the first sampling decode, which evaluates it
      // anyway: prefilling it too would decode it twice. An anchor that ends there needs it in the KV.
      const holdBack = plan.append.length > 0 && (anchor === undefined || anchor.tokens < plan.append.length) ? 1 : 0;
      const toPrefill = plan.append.slice(0, plan.append.length - holdBack);
      const promptEnd = plan.append.slice(toPrefill.length);
      if (anchor && deps.checkpoints) {
        const checkpoints = deps.checkpoints;
        yield* prefill(deps, sequence, toPrefill.slice(0, anchor.tokens), signal);
        await trace.during("anchor", () => checkpoints.saveAnchor(request.tenantId, anchor.text, sequence));
        yield* prefill(deps, sequence, toPrefill.slice(anchor.tokens), signal);
      } else {
        yield* prefill(deps, sequence, toPrefill, signal);
      }
      totals.input += plan.append.length;
      if (step === 0) trace.prefilled();

      const sampling = request.sampling;
      turn = yield* sampleTurn({
        sequence,
        parser: format.createOutputParser({ thinkingOpen, tools: plan.conversation.tools }),
        promptEnd,
        sampling: {
          temperature: sampling?.temperature ?? 1,
          topP: sampling?.topP ?? 1,
          topK: sampling?.topK ?? 0,
          minP: 0,
          seed: sampling?.seed === undefined ? undefined : Number(sampling.seed),
          grammar,
        },
        maxTokens: room,
        stopSequences: sampling?.stopSequences ?? [],
        signal,
        tokenBytes: (token) => engine.tokenBytes(token),
        isEndOfGeneration: (token) => engine.isEndOfGeneration(token),
        mintToolUseId: () => mintId(config.idSecret, ids.toolCall, request.tenantId, request.sessionId),
        serverTools,
        signThinking: (text) => signThinking(config.idSecret, request.tenantId, text),
        onToken: () => trace.token(),
      });
      totals.output += turn.outputTokens;
      stopReason = turn.stopReason;
      if (turn.stopReason !== StopReason.CANCELLED) recordTurn(deps, session, plan, promptTokens, turn);
      const hostedOnly = turn.toolCalls.length > 0 && turn.toolCalls.every((c) => c.server);
      if (turn.stopReason !== StopReason.TOOL_USE || !hostedOnly || !config.serverTools) {
        if (turn.toolCalls.some((c) => c.server) && turn.stopReason === StopReason.TOOL_USE) {
          log("server tool calls not run", { reason: "mixed with client tool calls", request: request.requestId });
        }
        break;
      }
      // The step's calls run inside the turn; the next step continues from their results.
      const added = yield* runServerStep({
        calls: turn.toolCalls,
        visibleText: turn.visibleText,
        offered,
        config: config.serverTools,
        uses,
        conversation: stepConversation,
        signal,
        requestId: request.requestId,
      });
      stepBlocks.push(...added);
      for (const call of turn.toolCalls) own.add(call.id);
      if (signal.aborted) {
        stopReason = StopReason.CANCELLED;
        break;
      }
      if (step + 1 >= config.serverTools.maxSteps) {
        // The results are not in the KV yet: the client's resume (the paused turn sent back) ends on
        // them and continues live from this frontier, suffix only.
        stopReason = StopReason.PAUSE_TURN;
        break;
      }
    }
    trace.sampled();
    const waiting = stopReason === StopReason.TOOL_USE || stopReason === StopReason.PAUSE_TURN;
    if (waiting && deps.checkpoints) {
      // Releases the session and schedules its checkpoint off the critical path: the most valuable
      // one, keyed to the tool IDs, so the tool results can continue even if the live state is
      // parked, lost or moved meanwhile (a tool result arriving first cancels it and runs live).
      deps.sessions.saveInBackground(session, "tool-frontier");
      savingInBackground = true;
    }
    const promptTokens = firstPlan ? firstPlan.keep + firstPlan.append.length : 0;
    log("turn finished", {
      stop: StopReason[stopReason],
      decision: firstPlan?.decision,
      prompt: promptTokens,
      cached: totals.cached,
      output: totals.output,
      tools: turn?.toolCalls.length ?? 0,
      searches: uses.webSearch || undefined,
      fetches: uses.webFetch || undefined,
      kv: sequence.tokens.length,
      ...trace.logFields(),
      session: request.sessionId.slice(0, 8),
      request: request.requestId,
    });
    if (firstPlan && turn) deps.metrics?.turnFinished(finishedTurn(firstPlan, promptTokens, turn, trace.phases()));
    yield generateEvent({
      case: "stop",
      value: {
        reason: stopReason,
        stopSequence: turn?.stopSequence ?? "",
        usage: {
          inputTokens: totals.input,
          cachedTokens: totals.cached,
          outputTokens: totals.output,
          webSearchRequests: uses.webSearch,
          webFetchRequests: uses.webFetch,
        },
      },
    });
  } finally {
    if (!savingInBackground) deps.sessions.release(session);
  }
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
  // The generation prefix's last plain segment plus the sampled text is exactly the plain segment a
  // replay of this turn renders; its tokens are what the KV holds.
  const head = plan.rendered.segments.at(-1);
  const headText = head && !head.special ? head.text : "";
  const lastTurn: SampledTurnRecord = {
    keys: toolUseIds.length > 0 ? toolUseIds : [visibleTextKey(turn.visibleText)],
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
    messageDigests: messages.map(messageDigest),
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

/** Render + tokenize without generating (count_tokens). */
export async function countPromptTokens(
  deps: Pick<TurnDeps, "engine" | "format" | "config">,
  conversation: Conversation,
  tenant: string,
): Promise<number> {
  // Hosted tools count as the turn renders them: the offered ones as tools, own exchanges split.
  const offered = offerServerTools(conversation.serverTools, deps.config.serverTools);
  const own = await ownServerCallIds(conversation, deps.config.idSecret, tenant);
  const expanded = expandServerTools(conversation, offered, own);
  return (await tokenizeSegments(deps.engine, deps.format.render(expanded).segments)).length;
}

async function* prefill(
  deps: TurnDeps,
  sequence: EngineSequence,
  tokens: readonly Token[],
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent> {
  const chunk = Math.max(1, deps.config.batchSize);
  let last = Date.now();
  for (let done = 0; done < tokens.length; done += chunk) {
    if (signal.aborted) throw signal.reason ?? new Error("cancelled");
    await sequence.append(tokens.slice(done, done + chunk), { signal });
    if (Date.now() - last >= deps.config.keepAliveMs && done + chunk < tokens.length) {
      last = Date.now();
      yield generateEvent({ case: "keepAlive", value: { prefilledTokens: done + chunk, totalTokens: tokens.length } });
    }
  }
}
