/** POST /v1/messages: authenticate, validate, find the session, forward to its worker, render. */
import { LIMITS } from "../../shared/limits.ts";
import { prefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { toGenerateRequest } from "../anthropic/normalize.ts";
import { AnthropicTurn } from "../anthropic/turn.ts";
import { validateMessagesRequest } from "../anthropic/validate.ts";
import { authenticate } from "../auth.ts";
import type { RequestContext } from "../context.ts";
import { GenerateCall } from "../generate-call.ts";
import { readJsonBody } from "../http.ts";
import { log } from "../log.ts";
import { serveWithFailover } from "../pool/serve-with-failover.ts";
import { collectRoutingIds } from "../routing.ts";
import {
  type ResolvedSession,
  recordTurn,
  releaseSession,
  resolveSession,
  routeHeader,
  turnLogFields,
} from "../session-route.ts";
import { respondJson, respondStream, type TurnOptions } from "../turn-driver.ts";
import { workerClient } from "../worker-client.ts";

export async function handleMessages(request: Request, rc: RequestContext): Promise<Response> {
  const { env, config, requestId } = rc;
  const tenant = await authenticate(request.headers, config.apiKeys);
  const body = validateMessagesRequest(await readJsonBody(request, LIMITS.maxBodyBytes), { requireMaxTokens: true });
  const generate = toGenerateRequest(body, { requestId, tenantId: tenant, sessionId: "", epoch: 0 });
  const prefix = generate.conversation ? await prefixFingerprint(tenant, generate.conversation) : undefined;
  const resolved = await resolveSession(env, config, {
    tenant,
    requestId,
    ids: collectRoutingIds(body.messages),
    hint: request.headers.get("x-claude-code-session-id"),
    prefix,
  });
  const attempt = (session: ResolvedSession): Promise<Response> => {
    generate.sessionId = session.sessionId;
    generate.epoch = BigInt(session.epoch);
    const call = new GenerateCall(workerClient(session.workerUrl, config.workerToken), generate, request.signal);
    const started = Date.now();
    const turn = new AnthropicTurn(body.model, requestId);
    const options: TurnOptions<AnthropicTurn> = {
      requestId,
      keepAliveMs: config.keepAliveMs,
      headerWaitMs: config.headerWaitMs,
      headers: { "x-frontier-route": routeHeader(session) },
      waitUntil: rc.waitUntil,
      onDone: async ({ assembler }) => {
        const prompt = assembler.prompt;
        log("anthropic turn", {
          ...turnLogFields(session, requestId, prompt),
          stream: body.stream,
          stop: assembler.stopReason ?? "incomplete",
          tools: assembler.toolUseIds.length,
          ms: Date.now() - started,
        });
        if (assembler.stopped && prompt) {
          await recordTurn(env, session, {
            tenant,
            requestId,
            messageId: prompt.messageId,
            toolUseIds: assembler.toolUseIds,
          });
        } else {
          await releaseSession(env, session, tenant, requestId);
        }
      },
    };
    return body.stream ? respondStream(call, turn, options) : respondJson(call, turn, options);
  };
  return serveWithFailover(env, config, resolved, { tenant, requestId, prefix }, attempt);
}
