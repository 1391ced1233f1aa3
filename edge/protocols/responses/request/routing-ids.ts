/**
 * The IDs a Responses input carries, for routing (see edge/session/routing.ts): the call IDs of the
 * trailing function_call_output items, and per replayed assistant turn (latest first) the call IDs
 * and item IDs (`fc_`, `msg_`, `rs_`) Frontier minted. A Codex-style replay without
 * previous_response_id finds its session this way.
 */
import type { RoutingIds } from "../../../session/routing.ts";
import type { InputItem } from "./types.ts";

export function collectResponsesRoutingIds(items: readonly InputItem[]): RoutingIds {
  const toolResults: string[] = [];
  const replayed: string[][] = [];
  let trailing = true;
  let current: string[] | undefined;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (!item) continue;
    if (isAssistantSide(item)) {
      trailing = false;
      if (!current) {
        current = [];
        replayed.push(current);
      }
      if (item.type === "function_call") current.push(item.call_id);
      const id = "id" in item && item.type !== "web_search_call" ? item.id : undefined;
      if (id !== undefined) current.push(id);
      continue;
    }
    // Developer-side items (instructions, tools added, configuration) neither end a turn nor start one.
    if (item.type === "message" && (item.role === "system" || item.role === "developer")) continue;
    if (item.type === "additional_tools" || item.type === "configuration_update") continue;
    current = undefined;
    if (trailing && item.type === "function_call_output") toolResults.push(item.call_id);
  }
  return {
    toolResults: toolResults.reverse(),
    replayed: replayed.filter((ids) => ids.length > 0),
    firstTurn: replayed.length === 0,
    assistantTurns: replayed.length,
  };
}

function isAssistantSide(item: InputItem): boolean {
  return (
    item.type === "function_call" ||
    item.type === "reasoning" ||
    item.type === "web_search_call" ||
    (item.type === "message" && item.role === "assistant")
  );
}
