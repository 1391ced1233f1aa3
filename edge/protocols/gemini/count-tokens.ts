/**
 * `POST /v1beta/models/{model}:countTokens`: the worker renders and tokenizes the contents (or the
 * whole `generateContentRequest`, system instruction and tools included) as a turn would.
 */
import { LIMITS } from "../../../shared/limits.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import type { PoolBindings } from "../../pool/pool-do.ts";
import type { Caller } from "../../tenancy/auth.ts";
import { countInputTokens } from "../../turn/count-tokens.ts";
import { toGeminiConversation } from "./request/normalize.ts";
import { validateCountTokensRequest } from "./request/validate.ts";

/** Behind `tenantLimited`, which authenticated the caller from headers before the body is read. */
export async function handleGeminiCountTokens(
  request: Request,
  rc: RequestContext<PoolBindings>,
  { tenant }: Caller,
  model: string,
): Promise<Response> {
  const body = validateCountTokensRequest(await readJsonBody(request, LIMITS.maxBodyBytes), model);
  const totalTokens = await countInputTokens(rc, tenant, toGeminiConversation(body), request.signal);
  return jsonResponse({ totalTokens, promptTokensDetails: [{ modality: "TEXT", tokenCount: totalTokens }] });
}
