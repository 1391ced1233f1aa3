/**
 * The IDs a Gemini request carries, for routing (see edge/session/routing.ts): the functionResponse
 * IDs of the user contents after the last model content, and the functionCall IDs of each replayed
 * model content (latest first). Frontier's `call_…` IDs name their session; positional IDs given to
 * calls a client sent without one never verify, so such a history routes by replay or hint instead.
 */
import type { RoutingIds } from "../../../session/routing.ts";
import type { GeminiContent } from "./types.ts";

export function collectGeminiRoutingIds(contents: readonly GeminiContent[]): RoutingIds {
  const toolResults: string[] = [];
  const replayed: string[][] = [];
  let trailing = true;
  let assistantTurns = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i];
    if (content?.role === "model") {
      trailing = false;
      if (contents[i + 1]?.role !== "model") assistantTurns++;
      const calls = content.parts.flatMap((part) => (part.kind === "functionCall" ? [part.id] : []));
      if (calls.length > 0) replayed.push(calls);
    } else if (content && trailing) {
      for (let p = content.parts.length - 1; p >= 0; p--) {
        const part = content.parts[p];
        if (part?.kind === "functionResponse") toolResults.push(part.id);
      }
    }
  }
  return { toolResults: toolResults.reverse(), replayed, firstTurn: assistantTurns === 0, assistantTurns };
}
