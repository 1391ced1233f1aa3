/** count_tokens: the prompt a turn would render, tokenized, without generating. */
import type { Conversation } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { tokenizeSegments } from "../generate/prompt-tokens.ts";
import { offerServerTools } from "../server-tools/declarations.ts";
import { expandServerTools, ownServerCallIds } from "../server-tools/expand.ts";
import type { TurnDeps } from "./turn.ts";

/** Render + tokenize without generating (count_tokens). */
export async function countPromptTokens(
  deps: Pick<TurnDeps, "engine" | "format" | "config">,
  conversation: Conversation,
  tenant: string,
): Promise<number> {
  // Hosted tools count as the turn renders them: the offered ones as tools, own exchanges split.
  const offered = offerServerTools(conversation.serverTools, deps.config.serverTools);
  const own = await ownServerCallIds(conversation, deps.config.idSecret, tenant);
  const expanded = expandServerTools(conversation, offered, own);
  return (await tokenizeSegments(deps.engine, deps.format.render(expanded).segments)).length;
}
