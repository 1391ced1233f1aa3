/**
 * The Responses stream's per-item pieces, used by ResponsesTurn (stream.ts): the shape a call item
 * takes from its tool's declaration, the events that close an output item (and what it holds when
 * done), a hosted search's item and its sealed result, and the stream's protocol errors.
 */
import type { PromptProcessed, ServerToolOutcome, Stop } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { ApiError } from "../../../core/errors.ts";
import { sealCallResult } from "../../../server-tools/sealed-hit.ts";
import type { RenderedEvent } from "../../../turn/turn-driver.ts";
import { compactionItemId, sealCompaction, summaryOf } from "../request/compaction-items.ts";
import { sealReasoning } from "../request/encrypted-reasoning.ts";
import { customInput } from "../request/tools.ts";
import type { FunctionTool, OutputItem, ResponseUsage, ToolOrigin } from "../request/types.ts";
import type { CustomInputStream } from "./custom-input-stream.ts";

/** The output item being streamed. */
export type Open =
  | { kind: "message" | "reasoning"; index: number; text: string }
  /** A call; a custom tool's raw `input` is decoded from the wrapper's arguments as they stream. */
  | { kind: "function_call"; index: number; toolIndex: number; arguments: string; input: CustomInputStream };

export type CallItem = Extract<OutputItem, { type: "function_call" | "custom_tool_call" }>;
type SearchItem = Extract<OutputItem, { type: "web_search_call" }>;

/** Builds one stream event (numbered in order by the turn). */
export type EmitEvent = (type: string, fields: Record<string, unknown>) => RenderedEvent;

/** Offered (model-view) tool name → where the tool came from; a name declared again keeps its first definition (request/additional-tools.ts). */
export function toolOrigins(tools: readonly FunctionTool[]): Map<string, ToolOrigin> {
  const origins = new Map<string, ToolOrigin>();
  for (const tool of tools) if (!origins.has(tool.name)) origins.set(tool.name, tool.origin);
  return origins;
}

/** A message or reasoning item as it opens, empty and in progress. */
export function openingItem(kind: "message" | "reasoning", id: string): OutputItem {
  return kind === "message"
    ? { type: "message", id, status: "in_progress", role: "assistant", content: [] }
    : { type: "reasoning", id, status: "in_progress", summary: [], content: [] };
}

/** The output item for a call of the offered tool `name`, in the shape its declaration asks for. */
export function callItem(origin: ToolOrigin | undefined, id: string, callId: string, name: string): CallItem {
  const base = { id, status: "in_progress" as const, call_id: callId };
  switch (origin?.kind) {
    case "custom":
      return origin.within === undefined
        ? { type: "custom_tool_call", ...base, name, input: "" }
        : {
            type: "custom_tool_call",
            ...base,
            name: origin.within.name,
            namespace: origin.within.namespace,
            input: "",
          };
    case "namespace":
      return { type: "function_call", ...base, name: origin.name, namespace: origin.namespace, arguments: "" };
    case "function":
    case undefined:
      return { type: "function_call", ...base, name, arguments: "" };
  }
}

/**
 * The events that finish the open item (arguments / input / text done, the content part done), and
 * the item's final content: the text, a custom call's decoded input, reasoning sealed when asked.
 * The caller adds `response.output_item.done` once the status is set.
 */
export async function closingEvents(
  open: Open,
  item: OutputItem,
  at: { item_id: string; output_index: number },
  seal: { idSecret: string; tenant: string; encryptedReasoning: boolean },
  event: EmitEvent,
): Promise<RenderedEvent[]> {
  const out: RenderedEvent[] = [];
  if (open.kind === "function_call" && item.type === "function_call") {
    out.push(event("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments }));
  } else if (open.kind === "function_call" && item.type === "custom_tool_call") {
    item.input = customInput(open.arguments);
    const rest = open.input.rest(item.input);
    if (rest !== "") out.push(event("response.custom_tool_call_input.delta", { ...at, delta: rest }));
    out.push(event("response.custom_tool_call_input.done", { ...at, input: item.input }));
  } else if (open.kind !== "function_call" && (item.type === "message" || item.type === "reasoning")) {
    const done = open.kind === "message" ? "response.output_text.done" : "response.reasoning_text.done";
    const part = open.kind === "message" ? outputText(open.text) : { type: "reasoning_text" as const, text: open.text };
    out.push(
      event(done, {
        ...at,
        content_index: 0,
        text: open.text,
        ...(open.kind === "message" ? { logprobs: [] } : {}),
      }),
    );
    out.push(event("response.content_part.done", { ...at, content_index: 0, part }));
    if (item.type === "message") item.content = [outputText(open.text)];
    else {
      item.content = [{ type: "reasoning_text", text: open.text }];
      if (seal.encryptedReasoning) item.encrypted_content = await sealReasoning(seal.idSecret, seal.tenant, open.text);
    }
  }
  return out;
}

/** A hosted search's item as it starts: in progress, searching for the query its input names. */
export function searchItem(id: string, inputJson: string): SearchItem {
  const query = searchQuery(inputJson);
  return { type: "web_search_call", id, status: "in_progress", action: { type: "search", query, queries: [query] } };
}

/** A hosted search finished: the item gets its status, sources and sealed result. */
export async function completeSearch(
  item: SearchItem,
  outcome: ServerToolOutcome,
  seal: { idSecret: string; tenant: string },
  sameStep: boolean,
): Promise<void> {
  item.status = outcome.errorCode === "" ? "completed" : "failed";
  item.action.sources = outcome.hits.map((hit) => ({ type: "url", url: hit.url }));
  item.encrypted_content = await sealCallResult(
    { secret: seal.idSecret, tenant: seal.tenant },
    {
      hits: outcome.hits.map((h) => ({ url: h.url, title: h.title, pageAge: h.pageAge, text: h.text })),
      errorCode: outcome.errorCode,
      sameStep,
    },
  );
}

/** The response's usage: input counts the cached tokens too (OpenAI's convention). */
export function responseUsage(stop: Stop, prompt: PromptProcessed | undefined): ResponseUsage {
  const cached = stop.usage?.cachedTokens ?? prompt?.cachedTokens ?? 0;
  const input = (stop.usage?.inputTokens ?? 0) + cached;
  const output = stop.usage?.outputTokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
}

/** Remote compaction v2: the summary this turn wrote, sealed for the tenant, as one `compaction` item. */
export async function compactionItem(idSecret: string, tenant: string, output: OutputItem[]): Promise<OutputItem> {
  return {
    type: "compaction",
    id: compactionItemId(),
    status: "completed",
    encrypted_content: await sealCompaction(idSecret, tenant, summaryOf(output)),
  };
}

function searchQuery(inputJson: string): string {
  try {
    const parsed: unknown = JSON.parse(inputJson);
    if (typeof parsed === "object" && parsed !== null && "query" in parsed && typeof parsed.query === "string") {
      return parsed.query;
    }
  } catch {
    // a call whose input did not parse: no query to show
  }
  return "";
}

export function outputText(text: string) {
  return { type: "output_text" as const, text, annotations: [] as [], logprobs: [] as [] };
}

/** A function_call_output whose call has no live or saved state, and no replayed function_call. */
export function unknownCallId(callId: string): ApiError {
  return new ApiError(
    "invalid_request_error",
    `No function call found for function_call_output with call_id '${callId}': it has no live or saved state on the server (it may have expired, or the instructions or tools changed). Send the full input, including the function_call item with this call_id, or continue with previous_response_id.`,
    { param: "input", code: "unknown_call_id" },
  );
}

export function protocolError(what: string): ApiError {
  return ApiError.internal(`GPU worker protocol error: ${what}`);
}
