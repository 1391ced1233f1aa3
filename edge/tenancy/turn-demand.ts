/**
 * The most a turn can use, known before it runs: the reservation its admission holds against
 * per-minute token rates and budgets until it settles.
 *
 * Prompt tokens: a token of any llama.cpp vocabulary covers at least one byte of the text it
 * tokenizes (text is tokenized with special-token parsing off), so the UTF-8 bytes of every string in
 * the canonical conversation bound its tokens; the chat template adds control tokens and fixed text
 * per message and tool, and the worker may render a replayed turn from its exact memory, so the bound
 * adds `MARGIN` (10 %), `PER_ITEM` tokens per message and tool and `FIXED` tokens. Output tokens: the
 * request's max_tokens, or the worker's default when it sets none. Hosted tools (web_search,
 * web_fetch) run further steps inside one turn and can go past this bound (docs/operations/tenants.md).
 */
import type { Conversation } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { LIMITS } from "../../shared/limits.ts";
import type { WorkerTurn } from "../worker/generate-request.ts";

export interface TurnDemand {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

const MARGIN = 1.1;
const PER_ITEM = 32;
const FIXED = 512;

export function turnDemand(model: string, turn: WorkerTurn): TurnDemand {
  return {
    model,
    inputTokens: promptTokenBound(turn.conversation),
    outputTokens: turn.sampling.maxTokens || LIMITS.defaultMaxOutputTokens,
  };
}

export function promptTokenBound(conversation: Conversation | undefined): number {
  if (!conversation) return FIXED;
  const items = conversation.messages.length + conversation.tools.length + conversation.serverTools.length;
  return Math.ceil(utf8Bytes(conversation) * MARGIN) + PER_ITEM * items + FIXED;
}

/** The UTF-8 bytes of every string (and the length of every byte array) in a value, recursively. */
export function utf8Bytes(value: unknown): number {
  if (typeof value === "string") return stringBytes(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) {
    let sum = 0;
    for (const item of value) sum += utf8Bytes(item);
    return sum;
  }
  if (value !== null && typeof value === "object") {
    let sum = 0;
    for (const [key, item] of Object.entries(value)) if (key !== "$typeName") sum += utf8Bytes(item);
    return sum;
  }
  return 0;
}

function stringBytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00) {
      bytes += 4; // a surrogate pair: one 4-byte character
      i++;
    } else bytes += 3;
  }
  return bytes;
}
