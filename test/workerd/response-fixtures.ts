/** A completed Response object with one assistant message, for store tests. */

import type { ResponseObject, ResponsesRequest } from "../../edge/protocols/responses/request/types.ts";
import { newResponseObject } from "../../edge/protocols/responses/response/response-object.ts";

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
