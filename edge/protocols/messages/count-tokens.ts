/** POST /v1/messages/count_tokens: the worker renders and tokenizes the conversation. */
import { create } from "@bufbuild/protobuf";
import { CountTokensRequestSchema } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { NO_SCOPE } from "../../../shared/capability.ts";
import { LIMITS } from "../../../shared/limits.ts";
import { ApiError } from "../../core/errors.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import { poolView, routableUrls } from "../../pool/pool-client.ts";
import type { PoolBindings } from "../../pool/pool-do.ts";
import { pickWorker } from "../../session/routing.ts";
import { admissionGate, admitTurn } from "../../tenancy/admission.ts";
import { identifyCaller } from "../../tenancy/auth.ts";
import type { TenantAuthorityBindings } from "../../tenancy/authority/tenant-authority-do.ts";
import { workerCallHeaders } from "../../turn/worker-identity.ts";
import { ownServerCalls } from "../../worker/generate-request.ts";
import { workerClient } from "../../worker/worker-client.ts";
import { rpcErrorToApiError } from "../../worker/worker-errors.ts";
import { ownBlobsFor, resolveOwnBlocks } from "./request/foreign-history.ts";
import { toConversation } from "./request/normalize.ts";
import { validateMessagesRequest } from "./request/validate.ts";

const COUNT_TIMEOUT_MS = 30_000;

/**
 * The caller is identified from the headers before the body is read; once the body is parsed, its
 * tenant's authority admits the request (rates, concurrency, the model's allow-list; it reserves no
 * tokens and is settled with no usage: counting is not billed).
 */
export async function handleCountTokens(
  request: Request,
  rc: RequestContext<PoolBindings & TenantAuthorityBindings>,
): Promise<Response> {
  const caller = await identifyCaller(request.headers, rc.config);
  const { tenant } = caller;
  const json = await readJsonBody(request, LIMITS.maxBodyBytes, admissionGate(rc, caller));
  const parsed = validateMessagesRequest(json, { requireMaxTokens: false });
  const admitted = admitTurn(rc, caller, { model: parsed.model, inputTokens: 0, outputTokens: 0 }, {});
  admitted.catch(() => undefined); // awaited before the worker call
  const own = ownBlobsFor(rc.config.idSecret, tenant);
  const body = { ...parsed, messages: await resolveOwnBlocks(parsed.messages, own) };
  const conversation = toConversation(body);
  const message = create(CountTokensRequestSchema, {
    requestId: rc.requestId,
    tenantId: tenant,
    conversation,
    ownServerCallIds: await ownServerCalls(rc.config.idSecret, tenant, conversation),
  });
  await admitted;
  const urls = routableUrls(await poolView(rc.env, rc.config), rc.config);
  if (urls.length === 0) throw ApiError.overloaded("No GPU worker is available; retry shortly", 5);
  const url = pickWorker(tenant, urls);
  const scope = { tenant, session: NO_SCOPE, ops: ["count_tokens" as const] };
  const headers = await workerCallHeaders(rc.env, rc.config, url, scope);
  const client = workerClient(url, rc.config.workerToken);
  try {
    const counted = await client.countTokens(message, { signal: request.signal, timeoutMs: COUNT_TIMEOUT_MS, headers });
    return jsonResponse({ input_tokens: counted.inputTokens });
  } catch (error) {
    throw rpcErrorToApiError(error);
  }
}
