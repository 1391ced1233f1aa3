import type { Engine, Token } from "../../native/engine-types.ts";
import {
  type Conversation,
  type GenerateEvent,
  type GenerateRequest,
  Role,
  StopReason,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { isSessionId, mintId } from "../../shared/ids.ts";
import { signThinking } from "../../shared/thinking-signature.ts";
import type { ChatFormat, PromptSegment } from "../chat/types.ts";
import type { WorkerConfig } from "../config.ts";
import { WorkerFailure } from "../errors.ts";
import { log } from "../log.ts";
import type { SessionTable } from "../session/session-table.ts";
import { generateEvent } from "./events.ts";
import { planTokenPrefixReuse } from "./plan-reuse.ts";
import { sampleTurn } from "./sample-turn.ts";
import { grammarForTurn } from "./sampling-policy.ts";

export interface TurnDeps {
  engine: Engine;
  format: ChatFormat;
  sessions: SessionTable;
  config: WorkerConfig;
}

/** Default output budget when a request leaves it to the worker (Responses without max_output_tokens). */
const DEFAULT_MAX_TOKENS = 4096;

/**
 * One Generate call: render the conversation, decide how much live KV to keep, prefill the rest
 * (with keep-alives), sample, and stream protocol-neutral events. The session is leased for the
 * whole call, so concurrent requests on one session never interleave.
 */
export async function* runTurn(
  deps: TurnDeps,
  request: GenerateRequest,
  signal: AbortSignal,
): AsyncGenerator<GenerateEvent> {
  const { engine, format, config } = deps;
  const conversation = checkConversation(request);
  if (!isSessionId(request.sessionId))
    throw WorkerFailure.invalid("session_id must be 32 hex characters", "session_id");
  const rendered = format.render(conversation);
  const promptTokens = tokenizeSegments(engine, rendered.segments);
  const room = config.contextSize - promptTokens.length;
  if (room < 1) {
    throw WorkerFailure.contextTooLong(
      `prompt is ${promptTokens.length} tokens; this worker's context holds ${config.contextSize}`,
    );
  }
  const maxTokens = Math.min(request.sampling?.maxTokens || DEFAULT_MAX_TOKENS, room);
  const session = await deps.sessions.lease(request.tenantId, request.sessionId);
  try {
    const sequence = session.sequence;
    const plan = planTokenPrefixReuse(sequence.tokens, promptTokens);
    const messageId = await mintId(config.idSecret, "msg", request.tenantId, request.sessionId);
    log("anthropic cache decision", {
      decision: plan.decision,
      miss: plan.missReason || undefined,
      cached: plan.reuse,
      prompt: promptTokens.length,
      session: request.sessionId.slice(0, 8),
      request: request.requestId,
    });
    yield generateEvent({
      case: "prompt",
      value: {
        promptTokens: promptTokens.length,
        cachedTokens: plan.reuse,
        decision: plan.decision,
        missReason: plan.missReason,
        messageId,
      },
    });
    await sequence.truncate(plan.reuse);
    yield* prefill(deps, sequence, promptTokens.slice(plan.reuse), signal);

    const sampling = request.sampling;
    const turn = yield* sampleTurn({
      sequence,
      parser: format.createOutputParser({ thinkingOpen: rendered.thinkingOpen }),
      sampling: {
        temperature: sampling?.temperature ?? 1,
        topP: sampling?.topP ?? 1,
        topK: sampling?.topK ?? 0,
        minP: 0,
        seed: sampling?.seed === undefined ? undefined : Number(sampling.seed),
        grammar: grammarForTurn(format, conversation, rendered.thinkingOpen, config.testPolicy),
      },
      maxTokens,
      stopSequences: sampling?.stopSequences ?? [],
      signal,
      tokenBytes: (token) => engine.tokenBytes(token),
      isEndOfGeneration: (token) => engine.isEndOfGeneration(token),
      mintToolUseId: () => mintId(config.idSecret, "toolu", request.tenantId, request.sessionId),
      signThinking: (text) => signThinking(config.idSecret, request.tenantId, text),
    });
    log("turn finished", {
      stop: StopReason[turn.stopReason],
      output: turn.outputTokens,
      tools: turn.toolCalls.length,
      kv: sequence.tokens.length,
      request: request.requestId,
    });
    yield generateEvent({
      case: "stop",
      value: {
        reason: turn.stopReason,
        stopSequence: turn.stopSequence,
        usage: {
          inputTokens: promptTokens.length - plan.reuse,
          cachedTokens: plan.reuse,
          outputTokens: turn.outputTokens,
        },
      },
    });
  } finally {
    deps.sessions.release(session);
  }
}

/** Render + tokenize without generating (count_tokens). */
export function countPromptTokens(deps: Pick<TurnDeps, "engine" | "format">, conversation: Conversation): number {
  return tokenizeSegments(deps.engine, deps.format.render(conversation).segments).length;
}

/** Template text is tokenized with control-token parsing on; all content with it off. */
export function tokenizeSegments(engine: Engine, segments: readonly PromptSegment[]): Token[] {
  const tokens: Token[] = [];
  for (const segment of segments) {
    if (segment.text.length === 0) continue;
    for (const t of engine.tokenize(segment.text, { special: segment.special })) tokens.push(t);
  }
  return tokens;
}

async function* prefill(
  deps: TurnDeps,
  sequence: { append: (tokens: readonly Token[], options?: { signal?: AbortSignal }) => Promise<void> },
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
  const last = conversation.messages.at(-1);
  if (last?.role === Role.ASSISTANT) {
    throw WorkerFailure.invalid(
      "messages: the last message must be a user message (assistant prefill is not supported yet)",
      "messages",
    );
  }
  return conversation;
}
