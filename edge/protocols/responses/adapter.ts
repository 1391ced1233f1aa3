/**
 * POST /v1/responses as a protocol adapter: validate, rebuild the conversation from `previous_response_id`
 * (stored records) plus the new input, find the session (the previous response's, else by the IDs
 * the input replays, else the `prompt_cache_key` hint, else new), render in the Responses shape, and
 * store the record (unless `store: false`) before the final event. The pipeline does the rest.
 */
import { verifyId } from "../../../shared/ids.ts";
import { ApiError } from "../../core/errors.ts";
import { log } from "../../core/log.ts";
import type { RequestContext } from "../../http/context.ts";
import { type IdCandidate, requestHint } from "../../session/routing.ts";
import type { TurnBindings } from "../../turn/bindings.ts";
import type { DecodeContext, ProtocolAdapter } from "../../turn/pipeline.ts";
import { unsealReasoningItems } from "./request/encrypted-reasoning.ts";
import { toWorkerTurn } from "./request/normalize.ts";
import { collectResponsesRoutingIds } from "./request/routing-ids.ts";
import type { InputItem } from "./request/types.ts";
import { validateResponsesRequest } from "./request/validate.ts";
import { resolveWebSearchCalls } from "./request/web-search-calls.ts";
import { ResponsesTurn } from "./response/stream.ts";
import type { ResponseStoreBindings, StoredResponse } from "./response-store-do.ts";

type ResponsesContext = RequestContext<ResponsesBindings>;

/** What a Responses turn reaches: the turn's bindings and the stored response records. */
export type ResponsesBindings = TurnBindings & ResponseStoreBindings;

export const responsesAdapter: ProtocolAdapter<ResponsesBindings, ResponsesTurn> = {
  protocol: "responses",
  async decode(json: unknown, { headers, rc, caller }: DecodeContext<ResponsesBindings>) {
    const { config, requestId } = rc;
    const { tenant } = caller;
    const body = validateResponsesRequest(json);
    let history: InputItem[] = [];
    let pinned: IdCandidate | undefined;
    if (body.previous_response_id !== undefined) {
      const previous = await previousResponse(rc, tenant, body.previous_response_id);
      history = previous.items;
      pinned = { sessionId: previous.sessionId, source: "previous-response" };
    }
    const input = await unsealReasoningItems(config.idSecret, tenant, body.input);
    const keys = { secret: config.idSecret, tenant };
    const items = await resolveWebSearchCalls([...history, ...input], keys);
    return {
      turn: toWorkerTurn(body, items),
      ids: collectResponsesRoutingIds(items),
      pinned,
      hint: requestHint(headers, body.prompt_cache_key),
      stream: body.stream,
      toolsNotOffered: body.tools_not_offered,
      headers: { "x-request-id": requestId },
      renderer: (session) =>
        new ResponsesTurn(body, {
          idSecret: config.idSecret,
          tenant,
          sessionId: session.sessionId,
          createdAt: Math.floor(Date.now() / 1000),
        }),
      beforeFinal: async (session, done) => {
        if (!body.store) return;
        // A record continues its parent's chain only inside one session; a branch stores its whole history.
        const sameSession = pinned !== undefined && pinned.sessionId === session.sessionId;
        await storeResponse(rc, session.sessionId, tenant, {
          response: done.response,
          input: sameSession ? input : items,
          parentId: sameSession ? (body.previous_response_id ?? null) : null,
        });
      },
    };
  },
};

/** The stored conversation up to `id`, or a 404 naming it (unknown, forged, another tenant's, expired). */
async function previousResponse(
  rc: ResponsesContext,
  tenant: string,
  id: string,
): Promise<{ sessionId: string; items: InputItem[] }> {
  const decoded = await verifyId(rc.config.idSecret, id, tenant);
  const notFound = (missing: string) =>
    new ApiError(
      "not_found_error",
      missing === id
        ? `Previous response with id '${id}' not found. It may have expired, been deleted, or been created with store: false; send the full input instead.`
        : `Previous response with id '${id}' cannot be continued: an earlier response in its chain ('${missing}') has expired or was deleted; send the full input instead.`,
      { param: "previous_response_id", code: "previous_response_not_found" },
    );
  if (decoded?.kind !== "resp") throw notFound(id);
  const history = await rc.env.RESPONSES.getByName(decoded.session).history(tenant, id);
  if (history.status !== "ok") throw notFound(history.id);
  return { sessionId: decoded.session, items: history.items };
}

async function storeResponse(
  rc: ResponsesContext,
  sessionId: string,
  tenant: string,
  record: StoredResponse,
): Promise<void> {
  try {
    await rc.env.RESPONSES.getByName(sessionId).put(tenant, record, rc.config.responseTtlMs);
  } catch (error) {
    log("response store failed", { session: sessionId.slice(0, 8), error: String(error) });
  }
}
