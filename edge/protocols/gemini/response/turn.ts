/**
 * The Gemini TurnRenderer: the worker's protocol-neutral events → `GenerateContentResponse` chunks
 * (SSE or a streamed JSON array, `framing.ts`) and the same turn as one response. Text streams as
 * text parts; thinking as `thought: true` parts when the request asked for them (`includeThoughts`),
 * the last one carrying the `thoughtSignature` Frontier minted; a function call is one whole
 * `functionCall` part (Gemini does not stream arguments) with its self-routing `id`. The last chunk
 * is held back one event so the finish reason and `usageMetadata` ride on it, as Gemini's do.
 */
import {
  type GenerateEvent,
  type PromptProcessed,
  type Stop,
  StopReason,
} from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { checkNever } from "../../../../shared/check-never.ts";
import { ApiError } from "../../../core/errors.ts";
import type { RenderedEvent, TurnRenderer } from "../../../turn/turn-driver.ts";
import { workerErrorToApiError } from "../../../worker/worker-errors.ts";
import { googleErrorBody } from "../errors.ts";
import type { StreamFraming } from "./framing.ts";
import type { GeminiFinishReason, GeminiOutputPart, GeminiResponse, GeminiUsageMetadata } from "./types.ts";

interface OpenCall {
  id: string;
  name: string;
  args: string;
}

export class GeminiTurn implements TurnRenderer {
  prompt: PromptProcessed | undefined;
  readonly toolCallIds: string[] = [];
  readonly keepAlive: string;
  readonly contentType: string;
  /** Every part of the answer, adjacent text (and thought) deltas joined: the JSON body's parts. */
  readonly #parts: GeminiOutputPart[] = [];
  /** The parts of the chunk not yet sent (held until the next event, or the stop). */
  #held: GeminiOutputPart[] = [];
  readonly #calls = new Map<number, OpenCall>();
  #finish: GeminiFinishReason | undefined;
  #usage: GeminiUsageMetadata | undefined;
  /** Nothing framed yet (a JSON array opens with its first element). */
  #first = true;
  /** A call's arguments were cut off (max tokens): the turn ends as MALFORMED_FUNCTION_CALL. */
  #malformed = false;

  constructor(
    readonly model: string,
    readonly includeThoughts: boolean,
    readonly framing: StreamFraming,
  ) {
    this.keepAlive = framing.keepAlive;
    this.contentType = framing.contentType;
  }

  get stopped(): boolean {
    return this.#finish !== undefined;
  }

  logFields(): Record<string, unknown> {
    return { finish: this.#finish ?? "incomplete", calls: this.toolCallIds.length };
  }

  push(event: GenerateEvent): RenderedEvent[] {
    if (this.stopped) return [];
    const e = event.event;
    switch (e.case) {
      case "prompt":
        if (!this.prompt) this.prompt = e.value;
        return [];
      case "keepAlive":
        return [{ sse: this.keepAlive, ping: true }];
      case "textDelta":
        this.#requirePrompt();
        return e.value.text === "" ? [] : this.#add({ text: e.value.text });
      case "thinkingDelta":
        this.#requirePrompt();
        return e.value.text === "" || !this.includeThoughts ? [] : this.#add({ text: e.value.text, thought: true });
      case "thinkingEnd":
        this.#sign(e.value.signature);
        return [];
      case "toolCallStart":
        this.#requirePrompt();
        this.#calls.set(e.value.index, { id: e.value.id, name: e.value.name, args: "" });
        return [];
      case "toolCallDelta":
        this.#call(e.value.index).args += e.value.argumentsJson;
        return [];
      case "toolCallEnd":
        return this.#endCall(e.value.index);
      case "stop":
        return this.#stop(e.value);
      case "error":
        throw workerErrorToApiError(e.value);
      case "serverToolCall":
      case "serverToolResult":
        throw protocolError("a hosted tool event (none is offered on the Gemini API)");
      case undefined:
        return [];
      default:
        return checkNever(e, "worker event");
    }
  }

  finish(): void {
    if (!this.stopped) throw ApiError.overloaded("The GPU worker ended the stream before the turn finished; retry");
  }

  body(): GeminiResponse {
    if (!this.#finish || !this.#usage) throw ApiError.internal("The turn did not complete");
    return this.#response({ parts: this.#parts, finishReason: this.#finish, usage: this.#usage });
  }

  /** The error as one more chunk (`{"error": …}`), closing a JSON array. */
  streamError(error: ApiError): string {
    const framed = this.framing.chunk(JSON.stringify(googleErrorBody(error)), this.#first);
    this.#first = false;
    return framed + this.framing.end(false);
  }

  /** Add `part` to the answer; returns the held chunk when this part starts a new one. */
  #add(part: GeminiOutputPart): RenderedEvent[] {
    const last = this.#parts.at(-1);
    if (last && "text" in last && "text" in part && last.thought === part.thought && !last.thoughtSignature) {
      last.text += part.text;
    } else {
      this.#parts.push({ ...part });
    }
    const out = this.#flush();
    this.#held = [part];
    return out;
  }

  /** The signature goes on the thought that was just streamed (when the client sees thoughts at all). */
  #sign(signature: string): void {
    const last = this.#parts.at(-1);
    const held = this.#held.at(-1);
    if (signature === "" || !last || !("text" in last) || !last.thought || !held || !("text" in held)) return;
    last.thoughtSignature = signature;
    held.thoughtSignature = signature;
  }

  #endCall(index: number): RenderedEvent[] {
    const call = this.#call(index);
    this.#calls.delete(index);
    const args = parseArgs(call.args);
    // A call cut off (max tokens) has no arguments to run: the turn ends as Gemini ends one.
    if (args === undefined) {
      this.#malformed = true;
      return [];
    }
    this.toolCallIds.push(call.id);
    return this.#add({ functionCall: { id: call.id, name: call.name, args } });
  }

  #stop(stop: Stop): RenderedEvent[] {
    this.#requirePrompt();
    if (stop.reason === StopReason.CANCELLED) throw ApiError.overloaded("The GPU worker cancelled this turn; retry");
    const cached = stop.usage?.cachedTokens ?? this.prompt?.cachedTokens ?? 0;
    const promptTokens = (stop.usage?.inputTokens ?? 0) + cached;
    const output = stop.usage?.outputTokens ?? 0;
    const thoughts = Math.min(stop.usage?.thinkingTokens ?? 0, output);
    this.#usage = {
      promptTokenCount: promptTokens,
      ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
      candidatesTokenCount: output - thoughts,
      ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
      totalTokenCount: promptTokens + output,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: promptTokens }],
      ...(cached > 0 ? { cacheTokensDetails: [{ modality: "TEXT" as const, tokenCount: cached }] } : {}),
    };
    this.#finish = this.#malformed ? "MALFORMED_FUNCTION_CALL" : finishReason(stop.reason);
    const last = this.#response({ parts: this.#held, finishReason: this.#finish, usage: this.#usage });
    const first = this.#first;
    this.#first = false;
    this.#held = [];
    return [{ sse: this.framing.chunk(JSON.stringify(last), first) + this.framing.end(false), final: true }];
  }

  /** The held chunk, framed (nothing when nothing is held). */
  #flush(): RenderedEvent[] {
    if (this.#held.length === 0) return [];
    const chunk = this.#response({ parts: this.#held });
    const sse = this.framing.chunk(JSON.stringify(chunk), this.#first);
    this.#first = false;
    this.#held = [];
    return [{ sse }];
  }

  #response(r: { parts: GeminiOutputPart[]; finishReason?: GeminiFinishReason; usage?: GeminiUsageMetadata }) {
    const response: GeminiResponse = {
      candidates: [
        {
          content: { role: "model", parts: r.parts },
          ...(r.finishReason ? { finishReason: r.finishReason } : {}),
          index: 0,
        },
      ],
      modelVersion: this.model,
      responseId: this.prompt?.messageId ?? "",
    };
    if (r.usage) response.usageMetadata = r.usage;
    return response;
  }

  #call(index: number): OpenCall {
    const call = this.#calls.get(index);
    if (!call) throw protocolError(`tool call ${index} before its start`);
    return call;
  }

  #requirePrompt(): void {
    if (!this.prompt) throw protocolError("content before the prompt event");
  }
}

function parseArgs(json: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(json === "" ? "{}" : json);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function finishReason(reason: StopReason): GeminiFinishReason {
  switch (reason) {
    case StopReason.MAX_TOKENS:
      return "MAX_TOKENS";
    case StopReason.END_TURN:
    case StopReason.STOP_SEQUENCE:
    case StopReason.TOOL_USE:
    case StopReason.PAUSE_TURN:
    case StopReason.UNSPECIFIED:
    case StopReason.CANCELLED:
      return "STOP";
  }
}

function protocolError(what: string): ApiError {
  return ApiError.internal(`GPU worker protocol error: ${what}`);
}
