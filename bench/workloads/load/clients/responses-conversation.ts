/**
 * A Codex-like Responses client on the openai SDK over HTTP: streaming POST /v1/responses,
 * `tool_choice: required`, each follow-up only the `function_call_output` items with
 * `previous_response_id` (the server keeps the state), its session id as `prompt_cache_key`, and the
 * SDK's own retries (429/5xx, honouring retry-after).
 */
import OpenAI from "openai";
import type {
  ResponseCreateParamsStreaming,
  ResponseInputItem,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import type { AgentTool } from "../../agent-loop.ts";
import {
  type ConversationSetup,
  failureOf,
  inStreamRefusal,
  type LoadConversation,
  statusReportingFetch,
  type ToolCall,
  type TurnControl,
  TurnFailure,
  type TurnInput,
  type TurnReply,
} from "../load-turn.ts";

export class ResponsesConversation implements LoadConversation {
  readonly protocol = "responses-http";
  readonly #client: OpenAI;
  #previous: string | undefined;
  #onStatus: ((status: number) => void) | undefined;

  constructor(private readonly setup: ConversationSetup) {
    this.#client = new OpenAI({
      baseURL: `${setup.edgeUrl}/v1`,
      apiKey: setup.apiKey,
      maxRetries: setup.maxRetries,
      fetch: statusReportingFetch(() => this.#onStatus),
    });
  }

  async send(input: TurnInput, control: TurnControl): Promise<TurnReply> {
    this.#onStatus = control.onStatus;
    try {
      const { data: stream, response } = await this.#client.responses
        .create(responsesBody(this.setup, inputItems(input), this.#previous), { signal: control.signal })
        .withResponse();
      const reply = await readResponseEvents(stream, control);
      this.#previous = reply.id;
      return { ...reply, decision: /decision=([\w-]+)/.exec(response.headers.get("x-frontier-cache") ?? "")?.[1] };
    } catch (error) {
      throw failureOf(error, OpenAI);
    } finally {
      this.#onStatus = undefined;
    }
  }

  close(): void {}
}

/** A turn's input as Responses items: the user's task, or one `function_call_output` per result. */
export function inputItems(input: TurnInput): ResponseInputItem[] {
  return input.kind === "task"
    ? [{ role: "user", content: input.text }]
    : input.results.map((r) => ({ type: "function_call_output", call_id: r.call.id, output: r.output }));
}

/** The request of one turn (the socket sends the same body as a `response.create`). */
export function responsesBody(
  setup: ConversationSetup,
  input: ResponseInputItem[],
  previous: string | undefined,
  store = true,
): ResponseCreateParamsStreaming {
  return {
    model: "frontier-test",
    // With previous_response_id the instructions are not carried over: a client re-sends them.
    instructions: setup.system,
    tools: setup.tools.map(functionTool),
    tool_choice: "required",
    max_output_tokens: setup.maxTokens,
    prompt_cache_key: setup.hint,
    store,
    stream: true,
    ...(previous === undefined ? {} : { previous_response_id: previous }),
    input,
  };
}

function functionTool(tool: AgentTool) {
  return {
    type: "function" as const,
    name: tool.name,
    description: tool.description,
    parameters: tool.input_schema,
    strict: false,
  };
}

/** Folds one server event into the turn; the reply once the response completed. */
export class ResponseTurnReader {
  readonly calls: ToolCall[] = [];

  constructor(private readonly control: TurnControl) {}

  push(event: { type: string } & Record<string, unknown>): (Omit<TurnReply, "decision"> & { id: string }) | undefined {
    if (event.type === "response.output_item.added") this.control.onFirstEvent();
    else if (event.type === "response.output_item.done") {
      const item = event.item as { type: string; call_id: string; name: string; arguments: string };
      if (item.type === "function_call")
        this.calls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
    } else if (event.type === "response.completed" || event.type === "response.incomplete") {
      const response = event.response as {
        id: string;
        usage?: { input_tokens: number; output_tokens: number; input_tokens_details?: { cached_tokens?: number } };
      };
      return {
        id: response.id,
        calls: this.calls,
        promptTokens: response.usage?.input_tokens ?? 0,
        cachedTokens: response.usage?.input_tokens_details?.cached_tokens ?? 0,
        outputTokens: response.usage?.output_tokens ?? 0,
      };
    } else if (event.type === "error" || event.type === "response.failed") {
      const body = event.type === "error" ? event : (event.response as { error?: unknown } | undefined)?.error;
      const retryAs = inStreamRefusal(body);
      const reason = retryAs === undefined ? "stream error" : `${retryAs} in stream`;
      throw new TurnFailure(reason, JSON.stringify(event).slice(0, 300), retryAs);
    }
    return undefined;
  }
}

async function readResponseEvents(
  stream: AsyncIterable<ResponseStreamEvent>,
  control: TurnControl,
): Promise<Omit<TurnReply, "decision"> & { id: string }> {
  const reader = new ResponseTurnReader(control);
  for await (const event of stream) {
    const done = reader.push(event as unknown as { type: string } & Record<string, unknown>);
    if (done) return done;
  }
  throw new TurnFailure("stream cut", "the stream ended without response.completed");
}
