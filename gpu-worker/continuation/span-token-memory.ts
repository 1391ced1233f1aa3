import { createHash } from "node:crypto";
import type { Token } from "../../native/engine-types.ts";
import { BudgetedLru } from "./budgeted-lru.ts";

/**
 * The exact tokens of text spans the model sampled. A sampled assistant turn sits in the KV as
 * the tokens the model chose, which a fresh tokenization of the same text generally does not
 * reproduce (BPE merges differ). When a prompt segment's text is a remembered span, those tokens
 * are used instead of tokenizing, so a replayed turn (a cold replay, or a token-prefix match
 * through it) is the exact token sequence the KV held. Per tenant; bounded by count and tokens.
 */
export class SpanTokenMemory {
  readonly #spans: BudgetedLru<readonly Token[]>;

  constructor(limits: { maxEntries: number; maxTokens: number } = { maxEntries: 20_000, maxTokens: 16_000_000 }) {
    this.#spans = new BudgetedLru({ maxEntries: limits.maxEntries, maxCost: limits.maxTokens }, (_, t) => t.length);
  }

  get size(): number {
    return this.#spans.size;
  }

  remember(tenant: string, text: string, tokens: readonly Token[]): void {
    this.#spans.set(spanKey(tenant, text), tokens);
  }

  recall(tenant: string, text: string): readonly Token[] | undefined {
    return this.#spans.get(spanKey(tenant, text));
  }
}

function spanKey(tenant: string, text: string): string {
  return createHash("sha256").update(tenant).update("\u0000").update(text).digest("base64url");
}
