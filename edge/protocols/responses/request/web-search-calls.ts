/**
 * Replayed Responses `web_search_call` items: Frontier's own (a `ws_…` ID that verifies for this
 * tenant and a sealed result that opens) get the exact text the model read; any other stays
 * without a result and is kept verbatim as context (edge/protocols/responses/request/normalize.ts).
 */
import { verifyId } from "../../../../shared/ids.ts";
import { searchResultText, serverToolErrorText } from "../../../../shared/server-tool-text.ts";
import { openCallResult, type SealKeys } from "../../../server-tools/sealed-hit.ts";
import type { InputItem } from "./types.ts";

export async function resolveWebSearchCalls(items: InputItem[], keys: SealKeys): Promise<InputItem[]> {
  return Promise.all(
    items.map(async (item): Promise<InputItem> => {
      if (item.type !== "web_search_call" || item.encrypted_content === undefined) return item;
      const decoded = await verifyId(keys.secret, item.id, keys.tenant);
      if (decoded?.kind !== "ws") return item;
      const sealed = await openCallResult(keys, item.encrypted_content);
      if (!sealed) return item;
      const isError = sealed.errorCode !== "";
      const text = isError ? serverToolErrorText(sealed.errorCode) : searchResultText(sealed.hits);
      return { ...item, result: { text, isError, sameStep: sealed.sameStep } };
    }),
  );
}
