/** POST /v1/messages/count_tokens: the worker renders and tokenizes the conversation. */
import { LIMITS } from "../../../shared/limits.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import type { PoolBindings } from "../../pool/pool-do.ts";
import { admissionGate, countAdmitted } from "../../tenancy/admission.ts";
import { identifyCaller } from "../../tenancy/auth.ts";
import type { TenantAuthorityBindings } from "../../tenancy/authority/tenant-authority-do.ts";
import { countInputTokens } from "../../turn/count-tokens.ts";
import { ownBlobsFor, resolveOwnBlocks } from "./request/foreign-history.ts";
import { toConversation } from "./request/normalize.ts";
import { validateMessagesRequest } from "./request/validate.ts";

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
  return countAdmitted(rc, caller, parsed.model, async (admittedRc) => {
    const own = ownBlobsFor(rc.config.idSecret, tenant);
    const body = { ...parsed, messages: await resolveOwnBlocks(parsed.messages, own) };
    const inputTokens = await countInputTokens(admittedRc, tenant, toConversation(body), request.signal);
    return jsonResponse({ input_tokens: inputTokens });
  });
}
