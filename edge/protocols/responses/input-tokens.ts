/**
 * POST /v1/responses/input_tokens (OpenAI's "Get input token counts"): the body of a
 * `/v1/responses` request (`model` and `input` optional, `previous_response_id` continued from the
 * stored records) counted as the worker would render it for that turn — `additional_tools` (in the
 * header or in place), `instructions`, tools and history included. Answers
 * `{"object": "response.input_tokens", "input_tokens": N}`. Nothing is generated or stored.
 */
import { LIMITS } from "../../../shared/limits.ts";
import { jsonResponse, readJsonBody } from "../../http/body.ts";
import { tenantLimited } from "../../tenancy/tenant-admission.ts";
import { countInputTokens } from "../../turn/count-tokens.ts";
import { decodeConversation, type ResponsesBindings } from "./adapter.ts";
import { toConversation } from "./request/normalize.ts";

export const handleInputTokens = tenantLimited<ResponsesBindings>(async (request, rc, caller) => {
  const json = await readJsonBody(request, LIMITS.maxBodyBytes);
  const { body, items } = await decodeConversation(json, rc, caller.tenant, undefined, { counting: true });
  const inputTokens = await countInputTokens(rc, caller.tenant, toConversation(body, items), request.signal);
  return jsonResponse({ object: "response.input_tokens", input_tokens: inputTokens });
});
