import { create } from "@bufbuild/protobuf";
import type { Token } from "../../native/engine-types.ts";
import {
  type Conversation,
  ConversationSchema,
  type Message,
  MessageSchema,
  Role,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { DecisionWord, MissWord } from "../../shared/cache-decision.ts";
import { segmentsFrom } from "../chat/engine/prompt-builder.ts";
import type { ChatFormat, PromptSegment, RenderedPrompt } from "../chat/types.ts";
import { WorkerFailure } from "../errors.ts";
import { HistoryDigests, headerDigest, messageDigest, sameIdSet, toolResultIds, toolUseIds } from "./digest.ts";
import { type Frontier, specialSpans } from "./frontier.ts";
import { anchorCounts, replayTurn } from "./replay-turn.ts";
import type { TurnMemory } from "./turn-memory.ts";

/** The ladder's rungs, in the words of the one decision table (shared/cache-decision.ts). */
export type Decision = DecisionWord;

/** Why the live state missed; "" on a hit (the table's "none"). */
export type MissReason = "" | Exclude<MissWord, "none">;

export interface ContinuationPlan {
  /** The conversation to serve (a tool-results-only request is expanded to the full history). */
  conversation: Conversation;
  rendered: RenderedPrompt;
  /** KV tokens kept. */
  keep: number;
  /** Tokens to prefill after them. */
  append: Token[];
  decision: Decision;
  missReason: MissReason;
  /** Tool-result IDs that named the live frontier (live-tool-ids only). */
  matchedIds: number;
}

export interface PlanInput {
  tenant: string;
  conversation: Conversation;
  format: ChatFormat;
  memory: TurnMemory;
  frontier: Frontier | undefined;
  liveTokens: readonly Token[];
  /** Resolves off the event loop's critical path for long texts (Engine.tokenizeAsync). */
  tokenize: (segments: readonly PromptSegment[]) => Promise<Token[]>;
}

/**
 * The continuation ladder: live tool-result IDs → rendered-text prefix → exact token prefix → cold.
 * Only the suffix after the kept KV is tokenized when a text-level match is found (never the
 * request's own tokens across that boundary). Disk checkpoints slot in before cold.
 */
export async function planContinuation(input: PlanInput): Promise<ContinuationPlan> {
  const live =
    input.frontier && input.liveTokens.length === input.frontier.tokenCount && input.liveTokens.length > 0
      ? input.frontier
      : undefined;
  const conversation = expandToolResultsOnly(input, live);
  const anchors = anchorCounts(conversation);
  const histories = new HistoryDigests(conversation.messages);
  const rendered = input.format.render(conversation, {
    rawAssistantTurn: (message, index) =>
      replayTurn(input.memory, input.tenant, message, anchors, () => histories.before(index)),
  });
  const base = { conversation, rendered, matchedIds: 0 };
  const resultIds = trailingToolResultIds(conversation);
  let missReason: MissReason = input.liveTokens.length === 0 ? "no-live-state" : live ? "" : "kv-moved";

  if (live) {
    const suffix = suffixAfter(rendered, live);
    const idsMatch = sameIdSet(resultIds, live.toolUseIds);
    const byIds = idsMatch && historyAgrees(conversation, live);
    if (idsMatch) missReason = byIds ? (suffix ? "" : "text-mismatch") : "history-edited";
    else if (resultIds.length > 0) missReason = "ids-not-live";
    if (suffix) {
      return {
        ...base,
        keep: live.tokenCount,
        append: await input.tokenize(suffix),
        decision: byIds ? "live-tool-ids" : "live-text-prefix",
        missReason,
        matchedIds: byIds ? resultIds.length : 0,
      };
    }
    if (missReason === "") missReason = "text-mismatch";
  }

  const tokens = await input.tokenize(rendered.segments);
  const common = commonPrefix(input.liveTokens, tokens);
  const keep = Math.min(common, tokens.length - 1);
  if (keep > 0) {
    const reason = common < input.liveTokens.length ? missReason || "token-mismatch" : missReason;
    return { ...base, keep, append: tokens.slice(keep), decision: "live-token-prefix", missReason: reason };
  }
  return {
    ...base,
    keep: 0,
    append: tokens,
    decision: "cold",
    missReason: missReason || (input.liveTokens.length > 0 ? "token-mismatch" : "no-live-state"),
  };
}

/**
 * A request that carries tool results without replaying the assistant turn that made the calls
 * continues only from a live frontier with exactly those IDs; it is expanded to the full history
 * here. Anything else is the client's cue to replay the full history.
 */
function expandToolResultsOnly(input: PlanInput, live: Frontier | undefined): Conversation {
  const { conversation } = input;
  const resultIds = trailingToolResultIds(conversation);
  if (resultIds.length === 0 || replaysCalls(conversation.messages, resultIds)) return conversation;
  const unknown = live ? resultIds.find((id) => !live.toolUseIds.includes(id)) : resultIds[0];
  const remembered = live ? input.memory.recall(input.tenant, live.toolUseIds[0] ?? "") : undefined;
  if (
    live &&
    unknown === undefined &&
    sameIdSet(resultIds, live.toolUseIds) &&
    remembered !== undefined &&
    sameIdSet(remembered.toolUseIds, live.toolUseIds) &&
    headerDigest(conversation) === live.headerDigest
  ) {
    // The turn renders from exact memory; the names are what a tool result's header shows (harmony).
    const names = live.lastTurn.toolNames;
    const calls = live.toolUseIds.map((id, i) => ({
      block: { case: "toolUse" as const, value: { id, name: names?.[i] ?? "", inputJson: "{}" } },
    }));
    // A turn that continued the client's trailing message (a foreign run) replays as one message with it.
    const continued = live.lastTurn.lead !== undefined ? live.messages.at(-1) : undefined;
    const before = continued ? live.messages.slice(0, -1) : live.messages;
    const assistant = create(MessageSchema, {
      role: Role.ASSISTANT,
      content: [...(continued?.content ?? []), ...calls],
    });
    return create(ConversationSchema, { ...conversation, messages: [...before, assistant, ...conversation.messages] });
  }
  const id = unknown ?? resultIds[0] ?? "";
  throw WorkerFailure.unknownToolUseId(
    `tool_result.tool_use_id "${id}" does not name a live tool call of this conversation (it may have expired, or the system prompt or tools changed); send the full messages history, including the assistant turn with this tool_use`,
    id,
  );
}

/**
 * Same header, the live history unchanged, the live assistant turn replayed, one new user turn (and
 * any system messages after it: a developer message a client appends after its tool outputs, such as
 * Codex's deferred-tool notice or tools it adds).
 */
function historyAgrees(conversation: Conversation, live: Frontier): boolean {
  const messages = conversation.messages;
  // A continued turn's trailing client message and its sampled blocks are one assistant message.
  const n = live.messageDigests.length - (live.lastTurn.lead !== undefined ? 1 : 0);
  if (lastTurnIndex(messages) !== n + 1 || headerDigest(conversation) !== live.headerDigest) return false;
  for (let i = 0; i < n; i++) {
    const message = messages[i];
    if (!message || messageDigest(message) !== live.messageDigests[i]) return false;
  }
  const assistant = messages[n];
  return assistant?.role === Role.ASSISTANT && sameIdSet(toolUseIds(assistant), live.toolUseIds);
}

/** The last message that is not a system message: system messages may follow the tool results. */
function lastTurnIndex(messages: readonly Message[]): number {
  let i = messages.length - 1;
  while (i >= 0 && messages[i]?.role === Role.SYSTEM) i--;
  return i;
}

function trailingToolResultIds(conversation: Conversation): string[] {
  const last = conversation.messages[lastTurnIndex(conversation.messages)];
  return last?.role === Role.USER ? toolResultIds(last) : [];
}

function replaysCalls(messages: readonly Message[], ids: readonly string[]): boolean {
  const previous = messages[lastTurnIndex(messages) - 1];
  if (previous?.role !== Role.ASSISTANT) return false;
  const made = new Set(toolUseIds(previous));
  return ids.every((id) => made.has(id));
}

/**
 * The request's segments after the live text, when the request renders that text segment for
 * segment: the same bytes and its template control tokens exactly where the KV holds them (the
 * prompt part; the sampled part is the model's own). Bytes alone would let a user message that
 * spells the template continue KV holding the real control tokens.
 */
function suffixAfter(rendered: RenderedPrompt, live: Frontier): PromptSegment[] | undefined {
  const liveText = live.text;
  if (rendered.text.length <= liveText.length || !rendered.text.startsWith(liveText)) return undefined;
  const control = live.controlSpans;
  if (control === undefined) return undefined;
  const requestSpans = specialSpans(rendered.segments).filter(([start]) => start < control.promptLength);
  if (requestSpans.length !== control.spans.length) return undefined;
  for (const [i, [start, end]] of requestSpans.entries()) {
    const span = control.spans[i];
    if (span === undefined || span[0] !== start || span[1] !== end) return undefined;
  }
  return segmentsFrom(rendered.segments, liveText.length);
}

function commonPrefix(a: readonly Token[], b: readonly Token[]): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a[i] === b[i]) i++;
  return i;
}
