/**
 * POST /v1/responses/input_tokens (OpenAI's "Get input token counts"): the body of a
 * `/v1/responses` request (`model` and `input` optional, `previous_response_id` continued from the
 * stored records) counted as the worker would render it for that turn — `additional_tools` (in the
 * header or in place), `instructions`, tools and history included. Answers
 * `{"object": "response.input_tokens", "input_tokens": N}`. Nothing is generated or stored.
 * The caller is identified from the headers before the body is read and admitted by its tenant's
 * authority (`countAdmitted`: the model's allow-list when the body names one; nothing billed).
 */
import { LIMITS } from "../../../shared/limits.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import type { RequestContext } from "../../http/context.ts";
import { admissionGate, countAdmitted } from "../../tenancy/admission.ts";
import { identifyCaller } from "../../tenancy/auth.ts";
import { countInputTokens } from "../../turn/count-tokens.ts";
import { decodeConversation, type ResponsesBindings } from "./adapter.ts";
import { toConversation } from "./request/normalize.ts";

export async function handleInputTokens(request: Request, rc: RequestContext<ResponsesBindings>): Promise<Response> {
  const caller = await identifyCaller(request.headers, rc.config);
  const json = await readJsonBody(request, LIMITS.maxBodyBytes, admissionGate(rc, caller));
  return countAdmitted(rc, caller, namedModel(json), async (admittedRc) => {
    const { body, items } = await decodeConversation(json, admittedRc, caller.tenant, undefined, { counting: true });
    const inputTokens = await countInputTokens(admittedRc, caller.tenant, toConversation(body, items), request.signal);
    return jsonResponse({ object: "response.input_tokens", input_tokens: inputTokens });
  });
}

/** The body's `model` when it names one (validation of the rest is decodeConversation's). */
function namedModel(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null || !("model" in json)) return undefined;
  return typeof json.model === "string" ? json.model : undefined;
}
