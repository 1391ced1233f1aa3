/**
 * The summary turn of POST /v1/responses/compact (request/summary-request.ts: the conversation, then
 * the summary request, no tool callable), never stored, never streamed; the conversation it
 * summarised is kept for the compacted output.
 */
import { requestHint } from "../../../session/routing.ts";
import type { DecodeContext, ProtocolAdapter } from "../../../turn/pipeline.ts";
import { decodeConversation, type ResponsesBindings } from "../adapter.ts";
import { additionalTools } from "../request/additional-tools.ts";
import { toWorkerTurn } from "../request/normalize.ts";
import { collectResponsesRoutingIds } from "../request/routing-ids.ts";
import { withSummaryRequest } from "../request/summary-request.ts";
import type { InputItem } from "../request/types.ts";
import { ResponsesTurn } from "../response/stream.ts";

/** The summary turn's adapter; after `decode`, `conversation` holds the items it summarises. */
export interface SummaryTurn extends ProtocolAdapter<ResponsesBindings, ResponsesTurn> {
  conversation: InputItem[];
}

export function summaryTurn(): SummaryTurn {
  const adapter: SummaryTurn = {
    protocol: "responses",
    conversation: [],
    async decode(json: unknown, { headers, rc, caller }: DecodeContext<ResponsesBindings>) {
      const { config, requestId } = rc;
      const { tenant } = caller;
      const decoded = await decodeConversation(json, rc, tenant, undefined);
      adapter.conversation = decoded.items;
      const summary = withSummaryRequest({ ...decoded.body, stream: false, store: false }, decoded.items);
      const { body, items } = summary;
      return {
        model: body.model,
        turn: toWorkerTurn(body, items),
        ids: collectResponsesRoutingIds(items),
        pinned: decoded.pinned,
        hint: requestHint(headers, body.prompt_cache_key),
        stream: false,
        toolsNotOffered: body.tools_not_offered,
        headers: { "x-request-id": requestId },
        renderer: (session) =>
          new ResponsesTurn(body, {
            idSecret: config.idSecret,
            tenant,
            sessionId: session.sessionId,
            createdAt: Math.floor(Date.now() / 1000),
            additionalTools: additionalTools(items),
          }),
      };
    },
  };
  return adapter;
}
