/** The Response object a request starts (echoing its parameters) and the history items it adds. */
import { checkNever } from "../../../../shared/check-never.ts";
import type { AnswerFormat } from "../../openai/response-format.ts";
import { customArguments, namespacedName } from "../request/tools.ts";
import type { InputItem, OutputItem, ResponseObject, ResponsesRequest, TextFormatObject } from "../request/types.ts";

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
    text: { format: textFormatObject(request.text_format) },
    tool_choice: request.tool_choice,
    tools: request.tools.map(({ origin: _origin, ...tool }) => tool),
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: null,
    user: request.user ?? null,
    metadata: request.metadata,
  };
}

function textFormatObject(format: AnswerFormat): TextFormatObject {
  if (format.type !== "json_schema") return { type: format.type };
  const { name, description, schema, strict } = format;
  return {
    type: "json_schema",
    name,
    ...(description === undefined ? {} : { description }),
    schema: schema ?? {},
    strict,
  };
}

/** A response's output as input items, the way a client would replay it. */
export function outputAsInput(output: readonly OutputItem[]): InputItem[] {
  return output.flatMap((item): InputItem | InputItem[] => {
    switch (item.type) {
      case "function_call": {
        const name = item.namespace === undefined ? item.name : namespacedName(item.namespace, item.name);
        return { type: "function_call", call_id: item.call_id, name, arguments: item.arguments, id: item.id };
      }
      case "custom_tool_call":
        return {
          type: "function_call",
          call_id: item.call_id,
          name: item.namespace === undefined ? item.name : namespacedName(item.namespace, item.name),
          arguments: customArguments(item.input),
          id: item.id,
        };
      case "message":
        return { type: "message", role: "assistant", text: item.content.map((p) => p.text).join(""), id: item.id };
      case "reasoning":
        // Stored by Frontier itself: its text is the exact sampled reasoning.
        return { type: "reasoning", text: item.content.map((p) => p.text).join(""), id: item.id };
      case "web_search_call":
        return {
          type: "web_search_call",
          id: item.id,
          status: item.status,
          action: { type: "search", query: item.action.query, sources: (item.action.sources ?? []).map((s) => s.url) },
          json: JSON.stringify(item),
          ...(item.encrypted_content === undefined ? {} : { encrypted_content: item.encrypted_content }),
        };
      case "compaction":
        // The summary it seals is the message before it, which the chain already replays.
        return [];
      default:
        return checkNever(item, "output item");
    }
  });
}
