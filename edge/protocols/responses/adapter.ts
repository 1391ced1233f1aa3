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
import { refuseOverRecordQuota } from "./record-quota.ts";
import { additionalTools, additionalToolsNotOffered } from "./request/additional-tools.ts";
import { applyConfigurationUpdates } from "./request/configuration-updates.ts";
import { unsealReasoningItems } from "./request/encrypted-reasoning.ts";
import { toWorkerTurn } from "./request/normalize.ts";
import { collectResponsesRoutingIds } from "./request/routing-ids.ts";
import { withSummaryRequest } from "./request/summary-request.ts";
import type { InputItem, ResponsesRequest } from "./request/types.ts";
import { validateResponsesRequest } from "./request/validate.ts";
import { resolveWebSearchCalls } from "./request/web-search-calls.ts";
import { outputAsInput } from "./response/response-object.ts";
import { ResponsesTurn } from "./response/stream.ts";
import type { ResponseStoreBindings } from "./response-store-do.ts";
import { loadHistory, putRecord, type StoredResponse } from "./sealed-records.ts";
import type { SocketMemory } from "./socket/socket-memory.ts";

export type ResponsesContext = RequestContext<ResponsesBindings>;

/** What a Responses turn reaches: the turn's bindings and the stored response records. */
export type ResponsesBindings = TurnBindings & ResponseStoreBindings;

/** A validated request's whole conversation: the previous response's (if named) plus the new input. */
export interface ResponsesConversation {
  body: ResponsesRequest;
  /** The new input, unsealed. */
  input: InputItem[];
  /** History + input, hosted-tool calls resolved: what the worker renders. */
  items: InputItem[];
  /** The previous response's session, when it ran in one. */
  pinned: IdCandidate | undefined;
  /** Where the previous response came from: a stored record chain continues it, a socket's does not. */
  previousFrom: "store" | "socket" | undefined;
}

export async function decodeConversation(
  json: unknown,
  rc: ResponsesContext,
  tenant: string,
  memory: SocketMemory | undefined,
  options: { counting?: boolean } = {},
): Promise<ResponsesConversation> {
  const { config } = rc;
  const body = validateResponsesRequest(json, options);
  let history: InputItem[] = [];
  let pinned: IdCandidate | undefined;
  let previousFrom: ResponsesConversation["previousFrom"];
  if (body.previous_response_id !== undefined) {
    const previous = await previousResponse(rc, tenant, body.previous_response_id, memory);
    history = previous.items;
    previousFrom = previous.from;
    if (previous.sessionId !== undefined) pinned = { sessionId: previous.sessionId, source: "previous-response" };
  }
  const input = await unsealReasoningItems(config.idSecret, tenant, body.input);
  const items = await resolveWebSearchCalls([...history, ...input], { secret: config.idSecret, tenant });
  // The settings the history's configuration_update items leave in effect; tools its items declared.
  const effective = withAdditionalToolsNotOffered(applyConfigurationUpdates(body, items), items);
  // Remote compaction v2 (input ends with `compaction_trigger`): this turn writes the summary.
  if (body.compaction_trigger) return { ...withSummaryRequest(effective, items), input, pinned, previousFrom };
  return { body: effective, input, items, pinned, previousFrom };
}

/** The hosted tool types `additional_tools` items declared join the request's own not-offered list. */
function withAdditionalToolsNotOffered(body: ResponsesRequest, items: readonly InputItem[]): ResponsesRequest {
  const added = additionalToolsNotOffered(items).filter((type) => !body.tools_not_offered.includes(type));
  return added.length === 0 ? body : { ...body, tools_not_offered: [...body.tools_not_offered, ...added] };
}

/**
 * The Responses adapter. Over a WebSocket it is given the socket's memory: the previous response
 * is looked up there first, and every finished response is remembered there, stored or not.
 */
export function responsesAdapterWith(memory?: SocketMemory): ProtocolAdapter<ResponsesBindings, ResponsesTurn> {
  return {
    protocol: "responses",
    async decode(json: unknown, { headers, rc, caller }: DecodeContext<ResponsesBindings>) {
      const { config, requestId } = rc;
      const { tenant } = caller;
      const { body, input, items, pinned, previousFrom } = await decodeConversation(json, rc, tenant, memory);
      // The quota is asked alongside admission and routing, not before them.
      const checks = body.store ? refuseOverRecordQuota(rc, tenant, input) : undefined;
      return {
        checks,
        model: body.model,
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
            additionalTools: additionalTools(items),
          }),
        beforeFinal: async (session, done) => {
          const { response } = done;
          memory?.remember(response.id, {
            items: [...items, ...outputAsInput(response.output)],
            sessionId: session.sessionId,
          });
          if (!body.store) return;
          // A record continues its parent's stored chain only inside one session; a branch, or a
          // response whose parent lives only on a socket, stores its whole history.
          const chained = previousFrom === "store" && pinned?.sessionId === session.sessionId;
          await storeResponse(rc, session.sessionId, tenant, {
            response,
            input: chained ? input : items,
            parentId: chained ? (body.previous_response_id ?? null) : null,
          });
        },
      };
    },
  };
}

/** Responses over HTTP: previous responses come from the stored records only. */
export const responsesAdapter = responsesAdapterWith();

interface PreviousResponse {
  sessionId: string | undefined;
  items: InputItem[];
  from: "store" | "socket";
}

/** The conversation up to `id`, or a 404 naming it (unknown, forged, another tenant's, expired). */
async function previousResponse(
  rc: ResponsesContext,
  tenant: string,
  id: string,
  memory: SocketMemory | undefined,
): Promise<PreviousResponse> {
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
  const remembered = memory?.get(id);
  if (remembered) return { ...remembered, from: "socket" };
  const owner = { secret: rc.config.idSecret, tenant, session: decoded.session };
  const history = await loadHistory(rc.env.RESPONSES.getByName(decoded.session), owner, id);
  if (history.status !== "ok") throw notFound(history.id);
  return { sessionId: decoded.session, items: history.items, from: "store" };
}

async function storeResponse(
  rc: ResponsesContext,
  sessionId: string,
  tenant: string,
  record: StoredResponse,
): Promise<void> {
  try {
    const owner = { secret: rc.config.idSecret, tenant, session: sessionId };
    await putRecord(rc.env.RESPONSES.getByName(sessionId), owner, record, rc.config.responseTtlMs);
  } catch (error) {
    log("response store failed", { session: sessionId.slice(0, 8), error: String(error) });
  }
}
