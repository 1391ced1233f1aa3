import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { Token } from "../../native/engine-types.ts";
import { type Message, MessageSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { TokenSpan } from "./sampled-spans.ts";

/** The exact record of the turn that produced a frontier (persisted with checkpoints). */
export interface SampledTurnRecord {
  /** Keys it is remembered under in the turn memory (its tool-call IDs, or its visible text key). */
  keys: readonly string[];
  /** Everything between the assistant role header and the end-of-turn marker, as sampled. */
  raw: string;
  toolUseIds: readonly string[];
  /** See RememberedTurn.lead. */
  lead?: string | undefined;
  /** The names of those calls, in the same order (absent in frontiers stored before they were kept). */
  toolNames?: readonly string[];
  /** The plain prompt segments a replay of the turn renders, with the tokens the KV holds for each. */
  spans: readonly TokenSpan[];
}

/**
 * What a session remembers about the point its KV stops at, recorded when a turn completes.
 * The IDs name the frontier; the digests let a request prove, cheaply, that it still agrees with
 * the history the KV holds.
 */
export interface Frontier {
  /** The exact text whose tokens the KV holds (prompt + sampled output). */
  text: string;
  /** KV length when recorded; a different length means the KV moved and the frontier is stale. */
  tokenCount: number;
  /** IDs of the tool calls of the last assistant turn (empty when it made none). */
  toolUseIds: readonly string[];
  /** The request's messages before the sampled turn (used to expand a tool-results-only request). */
  messages: readonly Message[];
  messageDigests: readonly string[];
  headerDigest: string;
  lastTurn: SampledTurnRecord;
  /**
   * Where the KV holds template control tokens: the [start, end) offsets in `text` of the prompt's
   * special segments, and the prompt's length (the sampled output follows it). The rendered-text
   * rung continues only a request whose special segments sit exactly there, so text that spells
   * the template never continues KV holding the real control tokens. Absent in frontiers saved
   * before it was recorded: those never match by text.
   */
  controlSpans?: { spans: readonly (readonly [number, number])[]; promptLength: number };
}

/** The [start, end) offsets of the special segments among `segments`, from their concatenated text's start. */
export function specialSpans(segments: readonly { text: string; special: boolean }[]): [number, number][] {
  const spans: [number, number][] = [];
  let at = 0;
  for (const segment of segments) {
    if (segment.special && segment.text.length > 0) spans.push([at, at + segment.text.length]);
    at += segment.text.length;
  }
  return spans;
}

/** JSON form of a frontier, stored beside a checkpoint's KV state. */
export function frontierToJson(frontier: Frontier): JsonValue {
  const { controlSpans, ...rest } = frontier;
  return {
    ...rest,
    ...(controlSpans
      ? { controlSpans: { spans: controlSpans.spans.map(([a, b]) => [a, b]), promptLength: controlSpans.promptLength } }
      : {}),
    toolUseIds: [...frontier.toolUseIds],
    messageDigests: [...frontier.messageDigests],
    messages: frontier.messages.map((m) => toJson(MessageSchema, m)),
    lastTurn: {
      ...frontier.lastTurn,
      keys: [...frontier.lastTurn.keys],
      toolUseIds: [...frontier.lastTurn.toolUseIds],
      toolNames: [...(frontier.lastTurn.toolNames ?? [])],
      spans: frontier.lastTurn.spans.map((s) => ({ text: s.text, tokens: [...s.tokens] })),
    },
  };
}

export function frontierFromJson(json: unknown): Frontier {
  const value = json as Omit<Frontier, "messages"> & { messages: JsonValue[] };
  if (typeof value?.text !== "string" || typeof value.tokenCount !== "number" || !Array.isArray(value.messages)) {
    throw new Error("malformed frontier");
  }
  const { controlSpans, ...rest } = value;
  const spansValid =
    typeof controlSpans?.promptLength === "number" &&
    Array.isArray(controlSpans.spans) &&
    controlSpans.spans.every((s) => Array.isArray(s) && s.length === 2 && s.every((n) => typeof n === "number"));
  return {
    ...rest,
    ...(spansValid ? { controlSpans } : {}),
    lastTurn: lastTurnFromJson(value.lastTurn),
    messages: value.messages.map((m) => fromJson(MessageSchema, m)),
  };
}

/** Frontiers stored before a turn kept several spans carry one (`spanText`, `spanTokens`). */
function lastTurnFromJson(turn: SampledTurnRecord & { spanText?: string; spanTokens?: Token[] }): SampledTurnRecord {
  if (Array.isArray(turn.spans)) return turn;
  const { spanText, spanTokens, ...rest } = turn;
  return { ...rest, spans: spanText && spanTokens ? [{ text: spanText, tokens: spanTokens }] : [] };
}
