/** POST /v1/messages/count_tokens: the worker renders and tokenizes the conversation. */
import { LIMITS } from "../../../shared/limits.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import type { PoolBindings } from "../../pool/pool-do.ts";
import type { Caller } from "../../tenancy/auth.ts";
import { countTokensOnWorker } from "../../turn/count-tokens.ts";
import { ownBlobsFor, resolveOwnBlocks } from "./request/foreign-history.ts";
import { toConversation } from "./request/normalize.ts";
import { validateMessagesRequest } from "./request/validate.ts";

/** Behind `tenantLimited`, which authenticated the caller from headers before the body is read. */
export async function handleCountTokens(
  request: Request,
  rc: RequestContext<PoolBindings>,
  { tenant }: Caller,
): Promise<Response> {
  const parsed = validateMessagesRequest(await readJsonBody(request, LIMITS.maxBodyBytes), { requireMaxTokens: false });
  const own = ownBlobsFor(rc.config.idSecret, tenant);
  const body = { ...parsed, messages: await resolveOwnBlocks(parsed.messages, own) };
  const inputTokens = await countTokensOnWorker(rc, tenant, toConversation(body), request.signal);
  return jsonResponse({ input_tokens: inputTokens });
}
