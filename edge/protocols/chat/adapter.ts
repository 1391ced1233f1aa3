/**
 * POST /v1/chat/completions: authenticate, validate, find the session (the session the trailing
 * tool messages' `tool_call_id`s name, else the one the replayed assistant `tool_calls` name, else
 * the client's hint, else new), forward to its worker, and render `chat.completion` JSON or
 * `chat.completion.chunk` SSE. Tool calls get `call_…` IDs minted with the session, so the next
 * request's tool messages continue the live KV with only the suffix prefilled.
 */
import { LIMITS } from "../../../shared/limits.ts";
import { prefixFingerprint } from "../../../shared/prefix-fingerprint.ts";
import { readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import { requestHint } from "../../session/routing.ts";
import { resolveSession } from "../../session/session-route.ts";
import { authenticate } from "../../tenancy/auth.ts";
import { serveTurn } from "../../turn/serve-turn.ts";
import { generateRequestFor, type TurnIdKinds } from "../../worker/generate-request.ts";
import { toResponseFormat } from "../openai/response-format.ts";
import { toChatConversation, toChatSampling } from "./normalize.ts";
import { collectChatRoutingIds } from "./routing-ids.ts";
import { ChatTurn } from "./stream.ts";
import { validateChatRequest } from "./validate.ts";

const CHAT_ID_KINDS: TurnIdKinds = { message: "chatcmpl", toolCall: "call", serverToolCall: "call" };

export async function handleChatCompletions(request: Request, rc: RequestContext): Promise<Response> {
  const { env, config, requestId } = rc;
  const tenant = await authenticate(request.headers, config.apiKeys);
  const body = validateChatRequest(await readJsonBody(request, LIMITS.maxBodyBytes));
  const target = { requestId, tenantId: tenant, sessionId: "", epoch: 0 };
  const generate = generateRequestFor(
    target,
    CHAT_ID_KINDS,
    toChatConversation(body),
    toChatSampling(body),
    toResponseFormat(body.responseFormat, "response_format.json_schema.schema"),
  );
  const prefix = generate.conversation ? await prefixFingerprint(tenant, generate.conversation) : undefined;
  const resolved = await resolveSession(env, config, {
    tenant,
    requestId,
    ids: collectChatRoutingIds(body.messages),
    hint: requestHint(request.headers, body.promptCacheKey),
    prefix,
    admitted: rc.admitted,
  });
  const createdAt = Math.floor(Date.now() / 1000);
  return serveTurn(request, rc, resolved, {
    protocol: "chat",
    tenant,
    generate,
    stream: body.stream,
    prefix,
    headers: { "x-request-id": requestId },
    renderer: () => new ChatTurn(body, createdAt),
  });
}
