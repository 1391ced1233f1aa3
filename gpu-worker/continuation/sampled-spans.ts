/**
 * The plain prompt segments a replay of a sampled turn renders, each with the exact tokens the KV
 * holds for it. A replayed turn is split at the control tokens the model samples (harmony's
 * `<|channel|>`, GLM's `<tool_call>`, DeepSeek's `<｜tool▁call▁begin｜>` …), so its text between
 * them becomes several plain segments; each is remembered on its own, or a cold replay would
 * re-tokenize them (under a real BPE vocabulary, rarely into the tokens the model chose).
 */
import type { Token } from "../../native/engine-types.ts";
import type { PromptSegment } from "../chat/types.ts";

export interface TokenSpan {
  text: string;
  tokens: readonly Token[];
}

/**
 * Align `tokens` (the head's tokens, then the sampled ones) with `pieces` (the replay's split of the
 * head text plus the sampled text): each plain piece gets the tokens covering exactly its bytes, each
 * control piece must be exactly one token spelling it. Undefined when they do not line up (a token
 * across a piece boundary, a control token spelled as text, bytes that are not valid UTF-8).
 */
export function alignSpans(
  pieces: readonly PromptSegment[],
  tokens: readonly Token[],
  tokenBytes: (token: Token) => Uint8Array,
): TokenSpan[] | undefined {
  const encoder = new TextEncoder();
  const spans: TokenSpan[] = [];
  let next = 0;
  for (const piece of pieces) {
    const want = encoder.encode(piece.text);
    const start = next;
    let bytes = 0;
    const got: Uint8Array[] = [];
    while (bytes < want.length && next < tokens.length) {
      const b = tokenBytes(tokens[next] as Token);
      got.push(b);
      bytes += b.length;
      next++;
    }
    if (bytes !== want.length || !sameBytes(want, got)) return undefined;
    if (piece.special) {
      if (next - start !== 1) return undefined;
    } else spans.push({ text: piece.text, tokens: tokens.slice(start, next) });
  }
  return next === tokens.length ? spans : undefined;
}

function sameBytes(want: Uint8Array, got: readonly Uint8Array[]): boolean {
  let at = 0;
  for (const b of got) {
    for (const byte of b) if (want[at++] !== byte) return false;
  }
  return at === want.length;
}
