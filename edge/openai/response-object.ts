/** The Response object a request starts (echoing its parameters) and the history items it adds. */
import type { InputItem, OutputItem, ResponseObject, ResponsesRequest } from "./types.ts";

export function newResponseObject(request: ResponsesRequest, id: string, createdAt: number): ResponseObject {
  return {
    id,
    object: "response",
    created_at: createdAt,
    status: "in_progress",
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: request.model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning_effort ?? null, summary: null },
    store: request.store,
    temperature: request.temperature ?? 1,
    text: { format: { type: "text" } },
    tool_choice: request.tool_choice,
    tools: request.tools,
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: null,
    user: request.user ?? null,
    metadata: request.metadata,
  };
}

/** A response's output as input items, the way a client would replay it. */
export function outputAsInput(output: readonly OutputItem[]): InputItem[] {
  return output.map((item): InputItem => {
    if (item.type === "function_call") {
      return { type: "function_call", call_id: item.call_id, name: item.name, arguments: item.arguments, id: item.id };
    }
    const text = item.content.map((part) => part.text).join("");
    return item.type === "message"
      ? { type: "message", role: "assistant", text, id: item.id }
      : { type: "reasoning", text, id: item.id };
  });
}
