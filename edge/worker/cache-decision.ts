/** The `x-frontier-cache` header, in the words of the one decision table (shared/cache-decision.ts). */
import type { PromptProcessed } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { decisionWord, missWord } from "../../shared/cache-decision.ts";

/** `decision=…; miss=…; cached=…; prompt=…`. */
export function cacheHeader(prompt: PromptProcessed): string {
  return `decision=${decisionWord(prompt.decision)}; miss=${missWord(prompt.missReason)}; cached=${prompt.cachedTokens}; prompt=${prompt.promptTokens}`;
}
