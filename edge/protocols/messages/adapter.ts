/** POST /v1/messages: authenticate, validate, find the session, forward to its worker, render. */
import { LIMITS } from "../../../shared/limits.ts";
import { prefixFingerprint } from "../../../shared/prefix-fingerprint.ts";
import { readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import { NOT_OFFERED_HEADER } from "../../server-tools/not-offered.ts";
import { requestHint } from "../../session/routing.ts";
import { resolveSession } from "../../session/session-route.ts";
import { authenticate } from "../../tenancy/auth.ts";
import { serveTurn } from "../../turn/serve-turn.ts";
import { ownBlobsFor, resolveOwnBlocks } from "./request/foreign-history.ts";
import { toGenerateRequest } from "./request/normalize.ts";
import { collectRoutingIds } from "./request/routing-ids.ts";
import { validateMessagesRequest } from "./request/validate.ts";
import { AnthropicTurn } from "./response/turn.ts";

export async function handleMessages(request: Request, rc: RequestContext): Promise<Response> {
  const { env, config, requestId } = rc;
  const tenant = await authenticate(request.headers, config.apiKeys);
  const parsed = validateMessagesRequest(await readJsonBody(request, LIMITS.maxBodyBytes), { requireMaxTokens: true });
  const body = { ...parsed, messages: await resolveOwnBlocks(parsed.messages, ownBlobsFor(config.idSecret, tenant)) };
  const generate = toGenerateRequest(body, { requestId, tenantId: tenant, sessionId: "", epoch: 0 });
  const prefix = generate.conversation ? await prefixFingerprint(tenant, generate.conversation) : undefined;
  const resolved = await resolveSession(env, config, {
    tenant,
    requestId,
    ids: collectRoutingIds(body.messages),
    hint: requestHint(request.headers),
    prefix,
    admitted: rc.admitted,
  });
  return serveTurn(request, rc, resolved, {
    protocol: "anthropic",
    tenant,
    generate,
    stream: body.stream,
    prefix,
    headers: body.tools_not_offered.length > 0 ? { [NOT_OFFERED_HEADER]: body.tools_not_offered.join(", ") } : {},
    renderer: () => new AnthropicTurn(body.model, requestId, { secret: config.idSecret, tenant }),
  });
}
