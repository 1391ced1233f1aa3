/**
 * POST /v1/chat/completions as a protocol adapter: validate, decode into the canonical turn (the
 * session is the one the trailing tool messages' `tool_call_id`s name, else the one the replayed
 * assistant `tool_calls` name, else the client's hint, else new), and render `chat.completion` JSON
 * or `chat.completion.chunk` SSE. Tool calls get `call_…` IDs minted with the session, so the next
 * request's tool messages continue the live KV with only the suffix prefilled.
 */

import { requestHint } from "../../session/routing.ts";
import type { TurnBindings } from "../../turn/bindings.ts";
import type { DecodeContext, ProtocolAdapter } from "../../turn/pipeline.ts";
import type { TurnIdKinds } from "../../worker/generate-request.ts";
import { toResponseFormat } from "../openai/response-format.ts";
import { toChatConversation, toChatSampling } from "./normalize.ts";
import { collectChatRoutingIds } from "./routing-ids.ts";
import { ChatTurn } from "./stream.ts";
import { validateChatRequest } from "./validate.ts";

const CHAT_ID_KINDS: TurnIdKinds = { message: "chatcmpl", toolCall: "call", serverToolCall: "call" };

export const chatAdapter: ProtocolAdapter<TurnBindings, ChatTurn> = {
  protocol: "chat",
  async decode(json: unknown, { headers, rc }: DecodeContext<TurnBindings>) {
    const body = validateChatRequest(json);
    const createdAt = Math.floor(Date.now() / 1000);
    return {
      model: body.model,
      turn: {
        idKinds: CHAT_ID_KINDS,
        conversation: toChatConversation(body),
        sampling: toChatSampling(body),
        responseFormat: toResponseFormat(body.responseFormat, "response_format.json_schema.schema"),
      },
      ids: collectChatRoutingIds(body.messages),
      hint: requestHint(headers, body.promptCacheKey),
      stream: body.stream,
      toolsNotOffered: [],
      headers: { "x-request-id": rc.requestId },
      renderer: () => new ChatTurn(body, createdAt),
    };
  },
};
