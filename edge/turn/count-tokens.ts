/**
 * Counting a conversation's input tokens on a worker (Messages `count_tokens`, Responses
 * `input_tokens`): the worker renders and tokenizes it exactly as a turn would, without generating.
 * Any routable worker will do (all serve one model); the call carries a `count_tokens`-only
 * capability with no session.
 */
import { create } from "@bufbuild/protobuf";
import { type Conversation, CountTokensRequestSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { NO_SCOPE } from "../../shared/capability.ts";
import { ApiError } from "../core/errors.ts";
import type { RequestContext } from "../http/context.ts";
import { poolView, routableUrls } from "../pool/pool-client.ts";
import type { PoolBindings } from "../pool/pool-do.ts";
import { pickWorker } from "../session/routing.ts";
import { ownServerCalls } from "../worker/generate-request.ts";
import { workerClient } from "../worker/worker-client.ts";
import { rpcErrorToApiError } from "../worker/worker-errors.ts";
import { workerCallHeaders } from "./worker-identity.ts";

const COUNT_TIMEOUT_MS = 30_000;

/** The prompt tokens of `conversation` as the worker renders it (after the caller was admitted). */
export async function countInputTokens(
  rc: RequestContext<PoolBindings>,
  tenant: string,
  conversation: Conversation,
  signal: AbortSignal,
): Promise<number> {
  const message = create(CountTokensRequestSchema, {
    requestId: rc.requestId,
    tenantId: tenant,
    conversation,
    ownServerCallIds: await ownServerCalls(rc.config.idSecret, tenant, conversation),
  });
  await rc.admitted;
  const urls = routableUrls(await poolView(rc.env, rc.config), rc.config);
  if (urls.length === 0) throw ApiError.overloaded("No GPU worker is available; retry shortly", 5);
  const url = pickWorker(tenant, urls);
  const scope = { tenant, session: NO_SCOPE, ops: ["count_tokens" as const] };
  const headers = await workerCallHeaders(rc.env, rc.config, url, scope);
  const client = workerClient(url, rc.config.workerToken);
  try {
    const counted = await client.countTokens(message, { signal, timeoutMs: COUNT_TIMEOUT_MS, headers });
    return counted.inputTokens;
  } catch (error) {
    throw rpcErrorToApiError(error);
  }
}
