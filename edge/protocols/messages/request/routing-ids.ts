/** The IDs an Anthropic Messages request carries, for routing (edge/session/routing.ts ranks them). */
import type { RoutingIds } from "../../../session/routing.ts";
import type { InputMessage } from "./types.ts";

export function collectRoutingIds(messages: readonly InputMessage[]): RoutingIds {
  const toolResults: string[] = [];
  const replayed: string[][] = [];
  let lastUserSeen = false;
  // Consecutive assistant messages are one turn (the API merges them).
  let assistantTurns = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (!message) continue;
    if (message.role === "assistant" && messages[i + 1]?.role !== "assistant") assistantTurns++;
    if (message.role === "user" && !lastUserSeen) {
      lastUserSeen = true;
      for (const block of message.content) if (block.type === "tool_result") toolResults.push(block.tool_use_id);
    } else if (message.role === "assistant") {
      const ids = message.content.flatMap((block) =>
        block.type === "tool_use" || block.type === "server_tool_use" ? [block.id] : [],
      );
      if (ids.length > 0) replayed.push(ids);
    }
  }
  return { toolResults, replayed, firstTurn: assistantTurns === 0, assistantTurns };
}
