/**
 * Kimi K2's call IDs. A call is written `<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{args}<|tool_call_end|>`
 * where `functions.NAME:IDX` is the call's ID, IDX a counter over every call of the conversation,
 * and a tool result names its call again (`## Return of functions.NAME:IDX`). Clients see
 * Frontier's routable IDs instead; the model sees, for each call of the history:
 * - the ID it sampled, read from the remembered turn (exact turn memory), so the history carries
 *   exactly what the KV holds;
 * - a client's own `functions.NAME:IDX` ID (a history from another Kimi server), verbatim;
 * - otherwise `functions.NAME:IDX` with IDX the call's position among all calls of the history,
 *   which is what a forced call samples (the grammar starts at the history's call count).
 */
import { type Conversation, Role } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { RenderOptions } from "../../types.ts";

export const CALLS_BEGIN = "<|tool_calls_section_begin|>";
export const CALLS_END = "<|tool_calls_section_end|>";
export const CALL_BEGIN = "<|tool_call_begin|>";
export const CALL_ARGUMENTS = "<|tool_call_argument_begin|>";
export const CALL_END = "<|tool_call_end|>";

/** The model-visible ID of the call at position `index` of a conversation. */
export const kimiCallId = (name: string, index: number): string => `functions.${name}:${index}`;

const KIMI_ID = /^functions\.[^\s:<]+:\d+$/;
const SAMPLED_ID = /<\|tool_call_begin\|>\s*([^<]*?)\s*<\|tool_call_argument_begin\|>/g;

/** The IDs a sampled turn wrote, in order. */
export function sampledCallIds(raw: string): string[] {
  return [...raw.matchAll(SAMPLED_ID)].map((m) => m[1] ?? "");
}

/** Client tool_use ID → the ID the model sees, for every call of the conversation. */
export function modelCallIds(
  conversation: Conversation,
  rawAssistantTurn: RenderOptions["rawAssistantTurn"],
): Map<string, string> {
  const ids = new Map<string, string>();
  let next = 0;
  conversation.messages.forEach((message, i) => {
    if (message.role !== Role.ASSISTANT) return;
    const calls = message.content.flatMap((c) => (c.block.case === "toolUse" ? [c.block.value] : []));
    if (calls.length === 0) return;
    const replay = rawAssistantTurn?.(message, i);
    const raw = typeof replay === "object" ? replay.raw : replay;
    const sampled = raw === undefined ? [] : sampledCallIds(raw);
    calls.forEach((call, k) => {
      const fromTurn = sampled.length === calls.length ? sampled[k] : undefined;
      ids.set(call.id, fromTurn ?? (KIMI_ID.test(call.id) ? call.id : kimiCallId(call.name, next)));
      next++;
    });
  });
  return ids;
}
