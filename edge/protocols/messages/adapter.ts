/**
 * POST /v1/messages as a protocol adapter: validate, resolve the blocks Frontier minted in the
 * history (sealed search hits, signed thinking), decode into the canonical turn with the IDs its
 * tool results name, and render Anthropic's events. The pipeline (turn/pipeline.ts) does the rest.
 */

import { requestHint } from "../../session/routing.ts";
import type { TurnBindings } from "../../turn/bindings.ts";
import type { DecodeContext, ProtocolAdapter } from "../../turn/pipeline.ts";
import { ownBlobsFor, resolveOwnBlocks } from "./request/foreign-history.ts";
import { toWorkerTurn } from "./request/normalize.ts";
import { collectRoutingIds } from "./request/routing-ids.ts";
import { validateMessagesRequest } from "./request/validate.ts";
import { AnthropicTurn } from "./response/turn.ts";

export const messagesAdapter: ProtocolAdapter<TurnBindings, AnthropicTurn> = {
  protocol: "anthropic",
  async decode(json: unknown, { headers, rc, caller }: DecodeContext<TurnBindings>) {
    const { config, requestId } = rc;
    const { tenant } = caller;
    const parsed = validateMessagesRequest(json, { requireMaxTokens: true });
    const body = { ...parsed, messages: await resolveOwnBlocks(parsed.messages, ownBlobsFor(config.idSecret, tenant)) };
    return {
      model: body.model,
      turn: toWorkerTurn(body),
      ids: collectRoutingIds(body.messages),
      hint: requestHint(headers),
      stream: body.stream,
      toolsNotOffered: body.tools_not_offered,
      renderer: () => new AnthropicTurn(body.model, requestId, { secret: config.idSecret, tenant }),
    };
  },
};
