/** Where a prefill saves a registered public prefix's state, when none is saved yet. */
import type { Token } from "../../../native/engine-types.ts";
import { segmentsUpTo } from "../../chat/engine/prompt-builder.ts";
import type { PromptSegment } from "../../chat/types.ts";
import type { ContinuationPlan } from "../../continuation/plan-continuation.ts";
import { commonPrefix } from "../../continuation/shared-prefix/block-chain.ts";
import type { PublicPrefix } from "../../continuation/shared-prefix/public-prefixes.ts";
import type { SharedPrefixes } from "./shared-prefixes.ts";

/**
 * The registered public prefix the request's rendered bytes start with, and how many of the
 * request's tokens are its tokens (the registered text tokenized on its own; where the request's
 * tokenization runs across the prefix's end they part, and the state stops before). The sequence
 * holds exactly those public tokens when the prefill reaches them: that is when it is saved.
 */
export async function publicSavePoint(
  shared: SharedPrefixes,
  plan: ContinuationPlan,
  requestTokens: readonly Token[],
  tokenize: (segments: readonly PromptSegment[]) => Promise<Token[]>,
): Promise<{ prefix: PublicPrefix; tokens: number } | undefined> {
  if (shared.publicPrefixes.size === 0) return undefined;
  const prefix = shared.publicPrefixes.match(plan.rendered.text);
  if (!prefix || !shared.publicStates.wanted(prefix)) return undefined;
  const segments = segmentsUpTo(plan.rendered.segments, prefix.chars);
  if (!segments) return undefined;
  const tokens = commonPrefix(await tokenize(segments), requestTokens);
  return tokens > 0 ? { prefix, tokens } : undefined;
}
