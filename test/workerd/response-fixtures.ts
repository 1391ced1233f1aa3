/** A completed Response object with one assistant message, and a session's store seen as the edge sees it, for store tests. */

import { env } from "cloudflare:workers";
import type { ResponseObject, ResponsesRequest } from "../../edge/protocols/responses/request/types.ts";
import { newResponseObject } from "../../edge/protocols/responses/response/response-object.ts";
import {
  loadHistory,
  loadResponse,
  putRecord,
  type RecordOwner,
  type StoredResponse,
} from "../../edge/protocols/responses/sealed-records.ts";

/** One session's ResponseStoreDO behind the edge's sealing, as the adapter and records.ts reach it. */
export function sealedStore(session: string = crypto.randomUUID(), secret: string = env.ID_SECRET ?? "") {
  const stub = env.RESPONSES.getByName(session);
  const owner = (tenant: string): RecordOwner => ({ secret, tenant, session });
  return {
    session,
    stub,
    put: (tenant: string, record: StoredResponse, ttlMs: number) => putRecord(stub, owner(tenant), record, ttlMs),
    get: (tenant: string, id: string) => loadResponse(stub, owner(tenant), id),
    history: (tenant: string, id: string) => loadHistory(stub, owner(tenant), id),
    delete: (tenant: string, id: string) => stub.delete(tenant, id),
  };
}

const REQUEST: ResponsesRequest = {
  model: "m",
  input: [],
  instructions: undefined,
  tools: [],
  tools_not_offered: [],
  server_tools: [],
  include_encrypted_reasoning: false,
  tool_choice: "auto",
  parallel_tool_calls: true,
  max_output_tokens: undefined,
  temperature: undefined,
  top_p: undefined,
  store: true,
  stream: false,
  previous_response_id: undefined,
  reasoning_effort: undefined,
  prompt_cache_key: undefined,
  metadata: {},
  user: undefined,
  text_format: { type: "text" },
};

export function newSessionResponse(id: string, text: string): ResponseObject {
  const response = newResponseObject(REQUEST, id, 0);
  response.status = "completed";
  response.output.push({
    type: "message",
    id: `msg_${id}`,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [], logprobs: [] }],
  });
  return response;
}
