/**
 * Which thoughts of a Gemini history are Frontier's own: a thought is the model's own reasoning only
 * when its `thoughtSignature` is the one Frontier mints for exactly its text and this tenant
 * (shared/thinking-signature.ts); any other is context from another model.
 */
import type { GeminiContent } from "./types.ts";

/** A thought is Frontier's own when its signature is the one Frontier mints for exactly its text and tenant. */
export async function markOwnThoughts(
  contents: readonly GeminiContent[],
  sign: (text: string) => Promise<string>,
): Promise<void> {
  const checks: Promise<void>[] = [];
  for (const content of contents) {
    for (const part of content.parts) {
      if (part.kind !== "thought" || part.signature === undefined) continue;
      const signature = part.signature;
      checks.push(
        sign(part.text).then((expected) => {
          part.own = constantTimeEqual(expected, signature);
        }),
      );
    }
  }
  await Promise.all(checks);
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
