/**
 * `reasoning.encrypted_content`: Frontier's own AEAD ciphertext (edge/core/sealed-text.ts, purpose
 * `reasoning`) of the exact reasoning a turn sampled, so a `store: false` client (Codex) that
 * replays it gets those exact bytes rendered back even after the worker forgot the turn. A blob
 * that does not open is treated as context, never as Frontier's reasoning.
 */
import { openText, sealText } from "../../../core/sealed-text.ts";
import { openCompactionItem } from "./compaction-items.ts";
import type { InputItem } from "./types.ts";

export function sealReasoning(secret: string, tenant: string, text: string): Promise<string> {
  return sealText(secret, tenant, "reasoning", text);
}

/** The exact reasoning text, or undefined for anything Frontier did not seal for this tenant. */
export function openReasoning(secret: string, tenant: string, blob: string): Promise<string | undefined> {
  return openText(secret, tenant, "reasoning", blob);
}

/**
 * Reasoning items that carry `encrypted_content`: a blob that opens replaces the item's text with
 * the exact sealed reasoning (`verified`); one that does not is marked `foreign` (context only).
 * `compaction` items open into their summary (compaction-items.ts), or fail the request naming the item.
 */
export async function unsealReasoningItems(secret: string, tenant: string, items: InputItem[]): Promise<InputItem[]> {
  return Promise.all(
    items.map(async (item, index): Promise<InputItem> => {
      if (item.type === "message") return openCompactionItem(secret, tenant, item, index);
      if (item.type !== "reasoning" || item.encrypted_content === undefined) return item;
      const text = await openReasoning(secret, tenant, item.encrypted_content);
      return text === undefined ? { ...item, sealed: "foreign" } : { ...item, text, sealed: "verified" };
    }),
  );
}
