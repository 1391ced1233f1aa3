/**
 * The turn that writes a compaction summary: the conversation exactly as /v1/responses would render
 * it (same instructions and tools, so a live session continues from its KV and prefills only the
 * request below), then one user message asking for the summary. No tool calls (`tool_choice: none`),
 * never stored, never streamed; the conversation it summarised is kept for the compacted output.
 */
import { requestHint } from "../../../session/routing.ts";
import type { DecodeContext, ProtocolAdapter } from "../../../turn/pipeline.ts";
import { decodeConversation, type ResponsesBindings } from "../adapter.ts";
import { toWorkerTurn } from "../request/normalize.ts";
import { collectResponsesRoutingIds } from "../request/routing-ids.ts";
import type { InputItem, ResponsesRequest } from "../request/types.ts";
import { ResponsesTurn } from "../response/stream.ts";

/** What the model is asked, after the conversation. */
export const SUMMARY_REQUEST =
  "Compact the conversation above. Write a summary that will replace it as your only memory of it: " +
  "the user's goals and constraints, what was decided and done (tool calls, commands, files and their " +
  "results that still matter), the current state, and what remains to do next. Keep names, paths and " +
  "numbers exact. Reply with the summary only.";

/** The summary's output budget when the request names none. */
export const SUMMARY_MAX_OUTPUT_TOKENS = 2048;

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
      const body: ResponsesRequest = {
        ...decoded.body,
        tool_choice: "none",
        stream: false,
        store: false,
        text_format: { type: "text" },
        max_output_tokens: decoded.body.max_output_tokens ?? SUMMARY_MAX_OUTPUT_TOKENS,
      };
      const items: InputItem[] = [...decoded.items, { type: "message", role: "user", text: SUMMARY_REQUEST }];
      return {
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
          }),
      };
    },
  };
  return adapter;
}
