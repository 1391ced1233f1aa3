/**
 * The IDs a Chat Completions request carries, for routing (see edge/session/routing.ts): the
 * `tool_call_id`s of the tool messages after the last assistant message, and the `tool_calls` ids
 * of each replayed assistant message (latest first). Frontier's `call_…` IDs name their session.
 */
import type { RoutingIds } from "../../session/routing.ts";
import type { ChatMessage } from "./types.ts";

export function collectChatRoutingIds(messages: readonly ChatMessage[]): RoutingIds {
  const toolResults: string[] = [];
  const replayed: string[][] = [];
  let trailing = true;
  let assistantTurns = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === "assistant") {
      trailing = false;
      if (messages[i + 1]?.role !== "assistant") assistantTurns++;
      if (message.toolCalls.length > 0) replayed.push(message.toolCalls.map((call) => call.id));
    } else if (message?.role === "tool" && trailing) {
      toolResults.push(message.toolCallId);
    }
  }
  return { toolResults: toolResults.reverse(), replayed, firstTurn: assistantTurns === 0, assistantTurns };
}
