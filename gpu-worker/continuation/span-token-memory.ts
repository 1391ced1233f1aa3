import { createHash } from "node:crypto";
import type { Token } from "../../native/engine-types.ts";

/**
 * The exact tokens of text spans the model sampled. A sampled assistant turn sits in the KV as
 * the tokens the model chose, which a fresh tokenization of the same text generally does not
 * reproduce (BPE merges differ). When a prompt segment's text is a remembered span, those tokens
 * are used instead of tokenizing, so a replayed turn (a cold replay, or a token-prefix match
 * through it) is the exact token sequence the KV held. Per tenant; bounded by count and bytes.
 */
export class SpanTokenMemory {
  readonly #spans = new Map<string, readonly Token[]>();
  readonly #maxEntries: number;
  readonly #maxTokens: number;
  #tokens = 0;

  constructor(limits: { maxEntries: number; maxTokens: number } = { maxEntries: 20_000, maxTokens: 16_000_000 }) {
    this.#maxEntries = limits.maxEntries;
    this.#maxTokens = limits.maxTokens;
  }

  get size(): number {
    return this.#spans.size;
  }

  remember(tenant: string, text: string, tokens: readonly Token[]): void {
    const key = spanKey(tenant, text);
    this.#delete(key);
    this.#spans.set(key, tokens);
    this.#tokens += tokens.length;
    while (this.#spans.size > this.#maxEntries || this.#tokens > this.#maxTokens) {
      const oldest = this.#spans.keys().next();
      if (oldest.done) break;
      this.#delete(oldest.value);
    }
  }

  recall(tenant: string, text: string): readonly Token[] | undefined {
    const key = spanKey(tenant, text);
    const tokens = this.#spans.get(key);
    if (tokens) {
      this.#spans.delete(key);
      this.#spans.set(key, tokens);
    }
    return tokens;
  }

  #delete(key: string): void {
    const old = this.#spans.get(key);
    if (!old) return;
    this.#spans.delete(key);
    this.#tokens -= old.length;
  }
}

function spanKey(tenant: string, text: string): string {
  return createHash("sha256").update(tenant).update("\u0000").update(text).digest("base64url");
}
