import { type Engine, type EngineSequence, type Token, TokenizerInputError } from "../../native/engine-types.ts";
import {
  type Conversation,
  type GenerateEvent,
  type GenerateRequest,
  type ResponseFormat,
  Role,
  StopReason,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type IdKind, isIdKind, isSessionId, mintId } from "../../shared/ids.ts";
import { signThinking } from "../../shared/thinking-signature.ts";
import { bindControlTokens } from "../chat/grammar-control-tokens.ts";
import { SchemaGrammarError } from "../chat/json-schema-grammar.ts";
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
import type { SessionCheckpoints } from "../session/session-checkpoints.ts";
import type { LeasedSession, SessionTable } from "../session/session-table.ts";
import { generateEvent } from "./events.ts";
import { type SampledTurn, sampleTurn } from "./sample-turn.ts";
import { grammarForTurn } from "./sampling-policy.ts";

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

/** The kinds of the IDs this turn mints, as the edge named them for its protocol. */
function idKinds(request: GenerateRequest): { message: IdKind; toolCall: IdKind } {
  const message = request.idKinds?.message ?? "";
  const toolCall = request.idKinds?.toolCall ?? "";
  if (!isIdKind(message) || !isIdKind(toolCall)) {
    throw WorkerFailure.invalid(`id_kinds must name ID kinds, got "${message}"/"${toolCall}"`, "id_kinds");
  }
  return { message, toolCall };
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
  const session = await trace.during("lease", () => deps.sessions.lease(request.tenantId, request.sessionId));
  let savingInBackground = false;
  try {
    const sequence = session.sequence;
    const tokenize = (segments: readonly PromptSegment[]) =>
      tokenizeSegments(engine, segments, (text) => deps.spans.recall(request.tenantId, text));
    let plan = await planContinuation({
      tenant: request.tenantId,
      conversation,
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
    const room = config.contextSize - 1 - promptTokens;
    if (room < 1) {
      throw WorkerFailure.contextTooLong(
        `prompt is ${promptTokens} tokens; this worker's context holds ${config.contextSize}`,
      );
    }
    const maxTokens = Math.min(request.sampling?.maxTokens || DEFAULT_MAX_TOKENS, room);
    trace.planned();
    const thinkingOpen = plan.rendered.thinkingOpen;
    // Built before the decision goes out, so a schema it refuses is the client's HTTP 400.
    const grammar = turnGrammar(engine, format, plan.conversation, thinkingOpen, config, request.responseFormat);
    logDecision(request, plan, promptTokens);
    yield generateEvent({
      case: "prompt",
      value: {
        promptTokens,
        cachedTokens: plan.keep,
        decision: decisionToWire(plan.decision),
        missReason: missReasonToWire(plan.missReason),
        messageId: await mintId(config.idSecret, ids.message, request.tenantId, request.sessionId),
      },
    });
    session.frontier = undefined;
    await sequence.truncate(plan.keep);
    const anchor =
      plan.decision === "cold"
        ? await deps.checkpoints?.anchorFor(request.tenantId, plan.rendered, tokenize)
        : undefined;
    if (anchor && deps.checkpoints) {
      const checkpoints = deps.checkpoints;
      yield* prefill(deps, sequence, plan.append.slice(0, anchor.tokens), signal);
      await trace.during("anchor", () => checkpoints.saveAnchor(request.tenantId, anchor.text, sequence));
      yield* prefill(deps, sequence, plan.append.slice(anchor.tokens), signal);
    } else {
      yield* prefill(deps, sequence, plan.append, signal);
    }
    trace.prefilled();

    const sampling = request.sampling;
    const turn = yield* sampleTurn({
      sequence,
      parser: format.createOutputParser({ thinkingOpen, tools: plan.conversation.tools }),
      sampling: {
        temperature: sampling?.temperature ?? 1,
        topP: sampling?.topP ?? 1,
        topK: sampling?.topK ?? 0,
        minP: 0,
        seed: sampling?.seed === undefined ? undefined : Number(sampling.seed),
        grammar,
      },
      maxTokens,
      stopSequences: sampling?.stopSequences ?? [],
      signal,
      tokenBytes: (token) => engine.tokenBytes(token),
      isEndOfGeneration: (token) => engine.isEndOfGeneration(token),
      mintToolUseId: () => mintId(config.idSecret, ids.toolCall, request.tenantId, request.sessionId),
      signThinking: (text) => signThinking(config.idSecret, request.tenantId, text),
      onToken: () => trace.token(),
    });
    trace.sampled();
    if (turn.stopReason !== StopReason.CANCELLED) recordTurn(deps, session, plan, promptTokens, turn);
    if (turn.stopReason === StopReason.TOOL_USE && deps.checkpoints) {
      // Releases the session and schedules its checkpoint off the critical path: the most valuable
      // one, keyed to the tool IDs, so the tool results can continue even if the live state is
      // parked, lost or moved meanwhile (a tool result arriving first cancels it and runs live).
      deps.sessions.saveInBackground(session, "tool-frontier");
      savingInBackground = true;
    }
    log("turn finished", {
      stop: StopReason[turn.stopReason],
      decision: plan.decision,
      prompt: promptTokens,
      cached: plan.keep,
      output: turn.outputTokens,
      tools: turn.toolCalls.length,
      kv: sequence.tokens.length,
      ...trace.logFields(),
      session: request.sessionId.slice(0, 8),
      request: request.requestId,
    });
    deps.metrics?.turnFinished(finishedTurn(plan, promptTokens, turn, trace.phases()));
    yield generateEvent({
      case: "stop",
      value: {
        reason: turn.stopReason,
        stopSequence: turn.stopSequence,
        usage: { inputTokens: plan.append.length, cachedTokens: plan.keep, outputTokens: turn.outputTokens },
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
  deps: Pick<TurnDeps, "engine" | "format">,
  conversation: Conversation,
): Promise<number> {
  return (await tokenizeSegments(deps.engine, deps.format.render(conversation).segments)).length;
}

/**
 * Template control tokens are tokenized with control-token parsing on; all other text with it off.
 * A replayed plain segment that is a remembered sampled span gets the tokens the model sampled. Long
 * texts are tokenized on the engine's tokenizer thread, so other sessions' turns go on meanwhile.
 */
export async function tokenizeSegments(
  engine: Engine,
  segments: readonly PromptSegment[],
  sampledSpan: (text: string) => readonly Token[] | undefined = () => undefined,
): Promise<Token[]> {
  checkPromptBytes(engine, segments);
  const tokens: Token[] = [];
  for (const segment of segments) {
    if (segment.text.length === 0) continue;
    const known = segment.replayed ? sampledSpan(segment.text) : undefined;
    for (const t of known ?? (await tokenizeText(engine, segment.text, segment.special))) tokens.push(t);
  }
  return tokens;
}

function turnGrammar(
  engine: Engine,
  format: ChatFormat,
  conversation: Conversation,
  thinkingOpen: boolean,
  config: WorkerConfig,
  responseFormat: ResponseFormat | undefined,
): string | undefined {
  try {
    const grammar = grammarForTurn(format, conversation, thinkingOpen, config.testPolicy, responseFormat);
    return grammar === undefined
      ? undefined
      : bindControlTokens(grammar, (t) => format.splitTurn(t), controlTokenId(engine));
  } catch (error) {
    if (error instanceof SchemaGrammarError) throw WorkerFailure.invalid(error.message, error.param);
    throw error;
  }
}

/** The id of the control token spelled `text`, if it is one token. */
function controlTokenId(engine: Engine): (text: string) => number | undefined {
  return (text) => {
    const tokens = engine.tokenize(text, { special: true });
    return tokens.length === 1 ? tokens[0] : undefined;
  };
}

/** A tokenizer refusal (a run its pre-tokenizer cannot take) is the client's 400, not the worker's 500. */
async function tokenizeText(engine: Engine, text: string, special: boolean): Promise<Token[]> {
  try {
    return await engine.tokenizeAsync(text, { special });
  } catch (error) {
    if (error instanceof TokenizerInputError) throw WorkerFailure.invalid(error.message, "messages");
    throw error;
  }
}

/**
 * Refuse, before tokenizing, a prompt whose bytes cannot fit the context however well they
 * tokenize: tokenizing 30 MB takes the event loop for half a minute.
 */
function checkPromptBytes(engine: Engine, segments: readonly PromptSegment[]): void {
  let bytes = 0;
  for (const segment of segments) if (!segment.special) bytes += Buffer.byteLength(segment.text, "utf8");
  const fewestTokens = Math.ceil(bytes / engine.maxTokenBytes);
  if (fewestTokens >= engine.options.contextSize) {
    throw WorkerFailure.contextTooLong(
      `prompt is ${bytes} bytes, at least ${fewestTokens} tokens; this worker's context holds ${engine.options.contextSize}`,
    );
  }
}

function decodeTokens(engine: Engine, tokens: readonly Token[]): string {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let text = "";
  for (const token of tokens) text += decoder.decode(engine.tokenBytes(token), { stream: true });
  return text + decoder.decode();
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

function checkConversation(request: GenerateRequest): Conversation {
  const conversation = request.conversation;
  if (!conversation || conversation.messages.length === 0) {
    throw WorkerFailure.invalid("messages: at least one message is required", "messages");
  }
  if (conversation.messages.at(-1)?.role === Role.ASSISTANT) {
    throw WorkerFailure.invalid(
      "messages: the last message must be a user message (assistant prefill is not supported yet)",
      "messages",
    );
  }
  return conversation;
}
