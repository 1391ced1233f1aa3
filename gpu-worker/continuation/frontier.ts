import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { Token } from "../../native/engine-types.ts";
import { type Message, MessageSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";

/** The exact record of the turn that produced a frontier (persisted with checkpoints). */
export interface SampledTurnRecord {
  /** Keys it is remembered under in the turn memory (its tool-call IDs, or its visible text key). */
  keys: readonly string[];
  /** Everything between the assistant role header and the end-of-turn marker, as sampled. */
  raw: string;
  toolUseIds: readonly string[];
  /** See RememberedTurn.lead. */
  lead?: string | undefined;
  /** The plain prompt segment a replay of the turn renders, and the tokens the KV holds for it. */
  spanText: string;
  spanTokens: readonly Token[];
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
}

/** JSON form of a frontier, stored beside a checkpoint's KV state. */
export function frontierToJson(frontier: Frontier): JsonValue {
  return {
    ...frontier,
    toolUseIds: [...frontier.toolUseIds],
    messageDigests: [...frontier.messageDigests],
    messages: frontier.messages.map((m) => toJson(MessageSchema, m)),
    lastTurn: {
      ...frontier.lastTurn,
      keys: [...frontier.lastTurn.keys],
      toolUseIds: [...frontier.lastTurn.toolUseIds],
      spanTokens: [...frontier.lastTurn.spanTokens],
    },
  };
}

export function frontierFromJson(json: unknown): Frontier {
  const value = json as Omit<Frontier, "messages"> & { messages: JsonValue[] };
  if (typeof value?.text !== "string" || typeof value.tokenCount !== "number" || !Array.isArray(value.messages)) {
    throw new Error("malformed frontier");
  }
  return { ...value, messages: value.messages.map((m) => fromJson(MessageSchema, m)) };
}
