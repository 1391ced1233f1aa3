/**
 * The shape every load client speaks, whatever its protocol: a conversation sends a turn (the task,
 * or the results of the last turn's tool calls) and returns what came back. A conversation keeps its
 * own history in its protocol's own form, as a real client does, and takes a turn into it only when
 * the turn completed (an aborted turn is re-sent as it was).
 */
import type { AgentTool } from "../agent-loop.ts";

export const PROTOCOLS = ["messages", "responses-http", "responses-ws", "chat"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
}

export type TurnInput =
  | { kind: "task"; text: string }
  | { kind: "results"; results: readonly { call: ToolCall; output: string }[] };

export interface TurnReply {
  calls: ToolCall[];
  /** Every prompt token, cached ones included. */
  promptTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** `x-frontier-cache`'s decision (HTTP turns; a socket turn has no headers). */
  decision: string | undefined;
}

export interface TurnControl {
  /** Aborts the turn's request: the turn's deadline, or the client giving up mid-stream. */
  signal: AbortSignal;
  /** Called once, at the turn's first streamed output event. */
  onFirstEvent(): void;
  /** Called with every HTTP status (or socket error status) a request of this turn received. */
  onStatus(status: number): void;
}

export interface LoadConversation {
  readonly protocol: Protocol;
  send(input: TurnInput, control: TurnControl): Promise<TurnReply>;
  close(): void;
}

/** What a conversation needs to talk to the edge. */
export interface ConversationSetup {
  edgeUrl: string;
  apiKey: string;
  system: string;
  tools: readonly AgentTool[];
  maxTokens: number;
  maxRetries: number;
  /** The client's session hint (a Claude Code session id, a Codex prompt_cache_key). */
  hint: string;
}

/** A turn that could not complete; `reason` is the short class the report counts by. */
export class TurnFailure extends Error {
  constructor(
    readonly reason: string,
    detail: string,
    /**
     * A refusal that came inside a started stream (HTTP 200 already sent), with the status it stands
     * for: clients that know the protocol retry it like that status (Claude Code retries an
     * `overloaded_error` event, Codex a failed stream); the SDKs alone do not.
     */
    readonly retryAs?: 429 | 529,
  ) {
    super(`${reason}: ${detail}`);
  }
}

/**
 * The status an in-stream error body stands for, from its structured fields: Anthropic's
 * `{"type":"error","error":{"type":"overloaded_error"|"rate_limit_error"}}`, OpenAI's
 * `{"code":"server_overloaded"|"rate_limit_exceeded"}` (at the top of a Responses `error` event, or
 * under `error` in a Chat Completions chunk). Anything else is not retried.
 */
export function inStreamRefusal(body: unknown): 429 | 529 | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as { type?: unknown; code?: unknown; error?: unknown };
  const inner = typeof b.error === "object" && b.error !== null ? (b.error as { type?: unknown; code?: unknown }) : {};
  const words = [b.type, b.code, inner.type, inner.code];
  if (words.includes("overloaded_error") || words.includes("server_overloaded")) return 529;
  if (words.includes("rate_limit_error") || words.includes("rate_limit_exceeded")) return 429;
  return undefined;
}

/** A fetch for the SDKs that reports every response's status to the turn running now. */
export function statusReportingFetch(report: () => ((status: number) => void) | undefined): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    report()?.(response.status);
    return response;
  };
}

/** The error classes an SDK exports (both the Anthropic and the OpenAI SDK have these). */
export interface SdkErrors {
  APIError: abstract new (...args: never[]) => Error & { status: number | undefined };
  APIUserAbortError: abstract new (...args: never[]) => Error;
  APIConnectionError: abstract new (...args: never[]) => Error;
}

/** The failure class of an error thrown by an SDK call or by reading its stream. */
export function failureOf(error: unknown, sdk: SdkErrors): TurnFailure {
  if (error instanceof TurnFailure) return error;
  const message = (error instanceof Error ? error.message : String(error)).slice(0, 300);
  if (error instanceof sdk.APIUserAbortError) return new TurnFailure("aborted", message);
  if (error instanceof sdk.APIConnectionError) return new TurnFailure("connection", message);
  if (error instanceof sdk.APIError) {
    if (error.status !== undefined) return new TurnFailure(`HTTP ${error.status}`, message);
    const retryAs = inStreamRefusal((error as { error?: unknown }).error);
    return new TurnFailure(retryAs === undefined ? "stream error" : `${retryAs} in stream`, message, retryAs);
  }
  return new TurnFailure("client error", message);
}
