/**
 * `POST /v1beta/models/{model}:countTokens`: the worker renders and tokenizes the contents (or the
 * whole `generateContentRequest`, system instruction and tools included) as a turn would. The caller
 * is identified from the headers and URL before the body is read and admitted by its tenant's
 * authority (`countAdmitted`: the path's model against the key's allow-list; nothing billed).
 */
import { LIMITS } from "../../../shared/limits.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import { admissionGate, countAdmitted } from "../../tenancy/admission.ts";
import type { TurnBindings } from "../../turn/bindings.ts";
import { countInputTokens } from "../../turn/count-tokens.ts";
import { identifyGeminiCaller } from "./auth.ts";
import { toGeminiConversation } from "./request/normalize.ts";
import { validateCountTokensRequest } from "./request/validate.ts";

export async function handleGeminiCountTokens(
  request: Request,
  rc: RequestContext<TurnBindings>,
  model: string,
): Promise<Response> {
  const caller = await identifyGeminiCaller(request, rc.config);
  const json = await readJsonBody(request, LIMITS.maxBodyBytes, admissionGate(rc, caller));
  const body = validateCountTokensRequest(json, model);
  return countAdmitted(rc, caller, model, async (admittedRc) => {
    const totalTokens = await countInputTokens(admittedRc, caller.tenant, toGeminiConversation(body), request.signal);
    return jsonResponse({ totalTokens, promptTokensDetails: [{ modality: "TEXT", tokenCount: totalTokens }] });
  });
}
