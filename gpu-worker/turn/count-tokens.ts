/** count_tokens: the prompt a turn would render, tokenized, without generating. */
import type { Conversation } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { tokenizeSegments } from "../generate/prompt-tokens.ts";
import { offerServerTools } from "../server-tools/declarations.ts";
import { expandServerTools } from "../server-tools/expand.ts";
import type { TurnDeps } from "./turn.ts";

/** Render + tokenize without generating (count_tokens). */
export async function countPromptTokens(
  deps: Pick<TurnDeps, "engine" | "format" | "config">,
  conversation: Conversation,
  /** The hosted-call IDs the edge verified as Frontier's own (CountTokensRequest.own_server_call_ids). */
  ownServerCallIds: readonly string[],
): Promise<number> {
  // Hosted tools count as the turn renders them: the offered ones as tools, own exchanges split.
  const offered = offerServerTools(conversation.serverTools, deps.config.serverTools);
  const expanded = expandServerTools(conversation, offered, new Set(ownServerCallIds));
  return (await tokenizeSegments(deps.engine, deps.format.render(expanded).segments)).length;
}
