/**
 * The Responses TurnRenderer: the worker's protocol-neutral events → the Responses stream
 * (`response.created` … `response.completed`/`incomplete`, each with a `sequence_number`) in the
 * order the openai SDK's accumulator expects, and the same snapshot as the non-streaming body.
 * Item IDs (`msg_`, `rs_`, `fc_`) are minted like every Frontier ID: session + keyed MAC. Calls of
 * a namespaced tool carry their `namespace`, calls of a custom tool are `custom_tool_call` items
 * (tools.ts); with `include: ["reasoning.encrypted_content"]` reasoning items carry the sealed
 * reasoning (encrypted-reasoning.ts).
 */
import {
  type GenerateEvent,
  type PromptProcessed,
  type ServerToolOutcome,
  type Stop,
  StopReason,
  WorkerErrorCode,
} from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type IdKind, mintId } from "../../../../shared/ids.ts";
import { encodeSseJson } from "../../../../shared/sse.ts";
import { ApiError } from "../../../core/errors.ts";
import { sealCallResult } from "../../../server-tools/sealed-hit.ts";
import type { RenderedEvent, TurnRenderer } from "../../../turn/turn-driver.ts";
import { workerErrorToApiError } from "../../../worker/worker-errors.ts";
import { encodeOpenAiStreamError, openAiErrorBody } from "../../openai/errors.ts";
import { compactionItemId, sealCompaction, summaryOf } from "../request/compaction-items.ts";
import { sealReasoning } from "../request/encrypted-reasoning.ts";
import { customInput } from "../request/tools.ts";
import type {
  FunctionTool,
  OutputItem,
  ResponseObject,
  ResponseStreamEvent,
  ResponsesRequest,
  ToolOrigin,
} from "../request/types.ts";
import { CustomInputStream } from "./custom-input-stream.ts";
import { newResponseObject } from "./response-object.ts";

export interface ResponsesTurnContext {
  idSecret: string;
  tenant: string;
  sessionId: string;
  createdAt: number;
  /** Tools the conversation's `additional_tools` items declare (callable besides `tools`). */
  additionalTools?: readonly FunctionTool[];
}

type Open =
  | { kind: "message" | "reasoning"; index: number; text: string }
  /** A call; a custom tool's raw `input` is decoded from the wrapper's arguments as they stream. */
  | { kind: "function_call"; index: number; toolIndex: number; arguments: string; input: CustomInputStream };

type CallItem = Extract<OutputItem, { type: "function_call" | "custom_tool_call" }>;

export class ResponsesTurn implements TurnRenderer {
  prompt: PromptProcessed | undefined;
  /** Call IDs of the function calls this turn made, in order. */
  readonly callIds: string[] = [];
  readonly keepAlive = ": keep-alive\n\n";
  response: ResponseObject;
  #stopped = false;
  #sequence = 0;
  #open: Open | undefined;
  /** Offered (model-view) tool name → where the tool came from. */
  readonly #origins: Map<string, ToolOrigin>;
  /** Hosted calls that ran in the same step as the call before them (the rendering depends on it). */
  readonly #sameStep = new Map<string, boolean>();
  #lastWasCall = false;

  constructor(
    readonly request: ResponsesRequest,
    readonly context: ResponsesTurnContext,
  ) {
    this.response = newResponseObject(request, "", context.createdAt);
    this.#origins = new Map();
    // A name declared again keeps its first definition (request/additional-tools.ts).
    for (const tool of [...request.tools, ...(context.additionalTools ?? [])])
      if (!this.#origins.has(tool.name)) this.#origins.set(tool.name, tool.origin);
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  get toolCallIds(): readonly string[] {
    return this.callIds;
  }

  logFields(): Record<string, unknown> {
    const searches = this.response.output.filter((i) => i.type === "web_search_call").length;
    return { status: this.response.status, calls: this.callIds.length, ...(searches > 0 ? { hosted: searches } : {}) };
  }

  async push(event: GenerateEvent): Promise<RenderedEvent[]> {
    if (this.#stopped) return [];
    const e = event.event;
    switch (e.case) {
      case "prompt":
        if (this.prompt) return [];
        this.prompt = e.value;
        this.response.id = e.value.messageId;
        return [
          this.#event("response.created", { response: this.response }),
          this.#event("response.in_progress", { response: this.response }),
        ];
      case "keepAlive":
        return [{ sse: this.keepAlive, ping: true }];
      case "textDelta":
        return this.#textDelta("message", e.value.text);
      case "thinkingDelta":
        return this.#textDelta("reasoning", e.value.text);
      case "thinkingEnd":
        return this.#thinkingEnd();
      case "toolCallStart":
        return this.#callStart(e.value.id, e.value.name, e.value.index);
      case "toolCallDelta":
        return this.#callDelta(e.value.index, e.value.argumentsJson);
      case "toolCallEnd":
        this.#openCall(e.value.index);
        return this.#close("completed");
      case "serverToolCall":
        return this.#serverCall(e.value.id, e.value.inputJson);
      case "serverToolResult":
        this.#lastWasCall = false;
        return this.#searchDone(e.value);
      case "stop":
        return this.#stop(e.value);
      case "error":
        throw e.value.code === WorkerErrorCode.UNKNOWN_TOOL_USE_ID
          ? unknownCallId(e.value.param)
          : workerErrorToApiError(e.value);
      case undefined:
        return [];
      default:
        throw protocolError("an unknown worker event");
    }
  }

  finish(): void {
    if (!this.#stopped) throw ApiError.overloaded("The GPU worker ended the stream before the turn finished; retry");
  }

  body(): ResponseObject {
    if (!this.#stopped) throw ApiError.internal("The turn did not complete");
    return this.response;
  }

  /** `error`, then `response.failed` with the same error on the response. */
  streamError(error: ApiError): string {
    const body = openAiErrorBody(error).error;
    this.response.status = "failed";
    this.response.error = { code: body.code ?? body.type, message: body.message };
    const first = encodeOpenAiStreamError(error, this.#sequence++);
    return first + this.#event("response.failed", { response: this.response }).sse;
  }

  async #textDelta(kind: "message" | "reasoning", text: string): Promise<RenderedEvent[]> {
    if (text === "") return [];
    const out = await this.#ensure(kind);
    const open = this.#open as Extract<Open, { kind: "message" | "reasoning" }>;
    open.text += text;
    const type = kind === "message" ? "response.output_text.delta" : "response.reasoning_text.delta";
    const extra = kind === "message" ? { logprobs: [] } : {};
    out.push(this.#event(type, { ...this.#at(open.index), content_index: 0, delta: text, ...extra }));
    return out;
  }

  /**
   * A thinking block ended. One that streamed no text (a turn cut inside `<think>`, or thinking the
   * parser shows nothing of) still gets its reasoning item, as Messages gets its thinking block: the
   * model reasoned, and the record must keep that turn so a follow-up re-renders its sampled bytes.
   */
  async #thinkingEnd(): Promise<RenderedEvent[]> {
    const out = this.#open?.kind === "reasoning" ? [] : await this.#ensure("reasoning");
    out.push(...(await this.#close("completed")));
    return out;
  }

  async #callStart(callId: string, name: string, toolIndex: number): Promise<RenderedEvent[]> {
    this.#requirePrompt();
    const out = await this.#close("completed");
    const item = this.#callItem(await this.#mint("fc"), callId, name);
    this.callIds.push(callId);
    out.push(this.#add(item));
    const index = this.response.output.length - 1;
    this.#open = { kind: "function_call", index, toolIndex, arguments: "", input: new CustomInputStream() };
    return out;
  }

  #callDelta(toolIndex: number, argumentsJson: string): RenderedEvent[] {
    const { open, item } = this.#openCall(toolIndex);
    if (argumentsJson === "") return [];
    open.arguments += argumentsJson;
    if (item.type === "custom_tool_call") {
      const delta = open.input.push(argumentsJson);
      return delta === "" ? [] : [this.#event("response.custom_tool_call_input.delta", { ...this.#at(), delta })];
    }
    item.arguments += argumentsJson;
    return [this.#event("response.function_call_arguments.delta", { ...this.#at(), delta: argumentsJson })];
  }

  /** A hosted search started: its item, in progress and searching. */
  async #serverCall(id: string, inputJson: string): Promise<RenderedEvent[]> {
    this.#requirePrompt();
    const out = await this.#close("completed");
    const query = searchQuery(inputJson);
    out.push(
      this.#add({
        type: "web_search_call",
        id,
        status: "in_progress",
        action: { type: "search", query, queries: [query] },
      }),
    );
    const at = this.#at(this.response.output.length - 1);
    out.push(this.#event("response.web_search_call.in_progress", at));
    out.push(this.#event("response.web_search_call.searching", at));
    this.#sameStep.set(id, this.#lastWasCall);
    this.#lastWasCall = true;
    return out;
  }

  /** A hosted search finished: the item gets its status, sources and sealed result. */
  async #searchDone(outcome: ServerToolOutcome): Promise<RenderedEvent[]> {
    const index = this.response.output.findIndex((i) => i.type === "web_search_call" && i.id === outcome.toolUseId);
    const item = this.response.output[index];
    if (item?.type !== "web_search_call") throw protocolError("a hosted tool result without its call");
    item.status = outcome.errorCode === "" ? "completed" : "failed";
    item.action.sources = outcome.hits.map((hit) => ({ type: "url", url: hit.url }));
    const { idSecret, tenant } = this.context;
    item.encrypted_content = await sealCallResult(
      { secret: idSecret, tenant },
      {
        hits: outcome.hits.map((h) => ({ url: h.url, title: h.title, pageAge: h.pageAge, text: h.text })),
        errorCode: outcome.errorCode,
        sameStep: this.#sameStep.get(outcome.toolUseId) ?? false,
      },
    );
    const at = this.#at(index);
    return [
      this.#event("response.web_search_call.completed", at),
      this.#event("response.output_item.done", { output_index: index, item }),
    ];
  }

  async #stop(stop: Stop): Promise<RenderedEvent[]> {
    this.#requirePrompt();
    if (stop.reason === StopReason.CANCELLED) throw ApiError.overloaded("The GPU worker cancelled this turn; retry");
    const incomplete = stop.reason === StopReason.MAX_TOKENS;
    // A turn that showed nothing (all it sampled was whitespace or markup the parser drops) still
    // answers with an empty assistant message: the history rebuilt from it keeps the turn the KV holds.
    const out = this.response.output.length === 0 ? await this.#ensure("message") : [];
    out.push(...(await this.#close(incomplete ? "incomplete" : "completed")));
    if (this.request.compaction_trigger) out.push(...(await this.#compaction()));
    const cached = stop.usage?.cachedTokens ?? this.prompt?.cachedTokens ?? 0;
    const input = (stop.usage?.inputTokens ?? 0) + cached;
    const output = stop.usage?.outputTokens ?? 0;
    this.response.usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: cached },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + output,
    };
    this.response.status = incomplete ? "incomplete" : "completed";
    if (incomplete) this.response.incomplete_details = { reason: "max_output_tokens" };
    this.#stopped = true;
    const type = incomplete ? "response.incomplete" : "response.completed";
    out.push({ ...this.#event(type, { response: this.response }), final: true });
    return out;
  }

  /** Remote compaction v2: the summary this turn wrote, sealed for the tenant, as one `compaction` item. */
  async #compaction(): Promise<RenderedEvent[]> {
    const { idSecret, tenant } = this.context;
    const summary = summaryOf(this.response.output);
    const item: OutputItem = {
      type: "compaction",
      id: compactionItemId(),
      status: "completed",
      encrypted_content: await sealCompaction(idSecret, tenant, summary),
    };
    const added = this.#add(item);
    return [added, this.#event("response.output_item.done", { output_index: this.response.output.length - 1, item })];
  }

  async #ensure(kind: "message" | "reasoning"): Promise<RenderedEvent[]> {
    this.#requirePrompt();
    if (this.#open?.kind === kind) return [];
    const out = await this.#close("completed");
    const item: OutputItem =
      kind === "message"
        ? { type: "message", id: await this.#mint("msg"), status: "in_progress", role: "assistant", content: [] }
        : { type: "reasoning", id: await this.#mint("rs"), status: "in_progress", summary: [], content: [] };
    out.push(this.#add(item));
    const index = this.response.output.length - 1;
    this.#open = { kind, index, text: "" };
    const part = kind === "message" ? outputText("") : { type: "reasoning_text" as const, text: "" };
    out.push(this.#event("response.content_part.added", { ...this.#at(index), content_index: 0, part }));
    return out;
  }

  async #close(status: "completed" | "incomplete"): Promise<RenderedEvent[]> {
    const open = this.#open;
    if (!open) return [];
    this.#open = undefined;
    const item = this.response.output[open.index];
    if (!item) throw protocolError("closing a missing output item");
    const out: RenderedEvent[] = [];
    const at = this.#at(open.index);
    if (open.kind === "function_call" && item.type === "function_call") {
      out.push(
        this.#event("response.function_call_arguments.done", { ...at, name: item.name, arguments: item.arguments }),
      );
    } else if (open.kind === "function_call" && item.type === "custom_tool_call") {
      item.input = customInput(open.arguments);
      const rest = open.input.rest(item.input);
      if (rest !== "") out.push(this.#event("response.custom_tool_call_input.delta", { ...at, delta: rest }));
      out.push(this.#event("response.custom_tool_call_input.done", { ...at, input: item.input }));
    } else if (open.kind !== "function_call" && (item.type === "message" || item.type === "reasoning")) {
      const done = open.kind === "message" ? "response.output_text.done" : "response.reasoning_text.done";
      const part =
        open.kind === "message" ? outputText(open.text) : { type: "reasoning_text" as const, text: open.text };
      out.push(
        this.#event(done, {
          ...at,
          content_index: 0,
          text: open.text,
          ...(open.kind === "message" ? { logprobs: [] } : {}),
        }),
      );
      out.push(this.#event("response.content_part.done", { ...at, content_index: 0, part }));
      if (item.type === "message") item.content = [outputText(open.text)];
      else {
        item.content = [{ type: "reasoning_text", text: open.text }];
        if (this.request.include_encrypted_reasoning) {
          const { idSecret, tenant } = this.context;
          item.encrypted_content = await sealReasoning(idSecret, tenant, open.text);
        }
      }
    }
    item.status = status;
    out.push(this.#event("response.output_item.done", { output_index: open.index, item }));
    return out;
  }

  /** The output item for a call of the offered tool `name`, in the shape its declaration asks for. */
  #callItem(id: string, callId: string, name: string): CallItem {
    const origin = this.#origins.get(name);
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

  #add(item: OutputItem): RenderedEvent {
    this.response.output.push(item);
    return this.#event("response.output_item.added", { output_index: this.response.output.length - 1, item });
  }

  #openCall(toolIndex: number): { open: Extract<Open, { kind: "function_call" }>; item: CallItem } {
    const open = this.#open;
    const item = open ? this.response.output[open.index] : undefined;
    const isCall = item?.type === "function_call" || item?.type === "custom_tool_call";
    if (open?.kind !== "function_call" || open.toolIndex !== toolIndex || !item || !isCall) {
      throw protocolError(`tool call ${toolIndex} is not the open output item`);
    }
    return { open, item: item as CallItem };
  }

  #at(index = this.#open?.index ?? 0): { item_id: string; output_index: number } {
    return { item_id: this.response.output[index]?.id ?? "", output_index: index };
  }

  /** Serialised at once, so later mutation of the snapshot never changes an event already built. */
  #event(type: string, fields: Record<string, unknown>): RenderedEvent {
    const event: ResponseStreamEvent = { type, ...fields, sequence_number: this.#sequence++ };
    return { sse: encodeSseJson(type, event) };
  }

  #mint(kind: IdKind): Promise<string> {
    return mintId(this.context.idSecret, kind, this.context.tenant, this.context.sessionId);
  }

  #requirePrompt(): void {
    if (!this.prompt) throw protocolError("content before the prompt event");
  }
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

function outputText(text: string) {
  return { type: "output_text" as const, text, annotations: [] as [], logprobs: [] as [] };
}

/** A function_call_output whose call has no live or saved state, and no replayed function_call. */
function unknownCallId(callId: string): ApiError {
  return new ApiError(
    "invalid_request_error",
    `No function call found for function_call_output with call_id '${callId}': it has no live or saved state on the server (it may have expired, or the instructions or tools changed). Send the full input, including the function_call item with this call_id, or continue with previous_response_id.`,
    { param: "input", code: "unknown_call_id" },
  );
}

function protocolError(what: string): ApiError {
  return ApiError.internal(`GPU worker protocol error: ${what}`);
}
