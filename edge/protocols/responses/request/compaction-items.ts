/**
 * `compaction` input items (what POST /v1/responses/compact returns, edge/protocols/responses/compact/):
 * the model's summary of the compacted history, sealed with Frontier's AEAD (edge/core/sealed-text.ts,
 * purpose `compaction`) for the tenant that asked, so only that tenant's later requests can open it.
 * An opened item renders as one user message, the summary under a fixed heading, in place of the
 * history it summarises. A blob that does not open (tampered, another tenant's, another deployment's)
 * is a 400 naming the field: a summary nobody can read must not silently vanish from the context.
 */
import { fail } from "../../../core/check.ts";
import { openText, sealText } from "../../../core/sealed-text.ts";
import type { InputItem, OutputItem } from "./types.ts";

/** The heading the model sees above an opened summary. */
export const COMPACTION_SUMMARY_HEADING =
  "The earlier part of this conversation was compacted. Summary of it, written by the assistant:\n\n";

export function sealCompaction(secret: string, tenant: string, summary: string): Promise<string> {
  return sealText(secret, tenant, "compaction", summary);
}

/** The summary text, or undefined for anything Frontier did not seal as a compaction for this tenant. */
export function openCompaction(secret: string, tenant: string, blob: string): Promise<string | undefined> {
  return openText(secret, tenant, "compaction", blob);
}

/** The model-visible text of an opened compaction item. */
export function compactionText(summary: string): string {
  return COMPACTION_SUMMARY_HEADING + summary;
}

/**
 * The item at `input[index]` with its compaction opened: a plain user message holding the summary.
 * Other items pass through unchanged.
 */
export async function openCompactionItem(
  secret: string,
  tenant: string,
  item: InputItem,
  index: number,
): Promise<InputItem> {
  if (item.type !== "message" || item.compaction === undefined) return item;
  const summary = await openCompaction(secret, tenant, item.compaction);
  if (summary === undefined) {
    fail(
      ["input", index, "encrypted_content"],
      "This compaction item cannot be opened: it was not produced by /v1/responses/compact for this API key's organization, or it was modified",
    );
  }
  return {
    type: "message",
    role: "user",
    text: compactionText(summary),
    ...(item.id === undefined ? {} : { id: item.id }),
  };
}

/** The summary a turn wrote: its message text, else (a thinking model cut short) its reasoning. */
export function summaryOf(output: readonly OutputItem[]): string {
  const text = output
    .flatMap((item) => (item.type === "message" ? item.content.map((part) => part.text) : []))
    .join("");
  if (text.trim() !== "") return text;
  return output.flatMap((item) => (item.type === "reasoning" ? item.content.map((part) => part.text) : [])).join("");
}

/** `cmp_` + 24 hex characters: the item's own id (what is verified is its content, not the id). */
export function compactionItemId(): string {
  let hex = "";
  for (const b of crypto.getRandomValues(new Uint8Array(12))) hex += b.toString(16).padStart(2, "0");
  return `cmp_${hex}`;
}
