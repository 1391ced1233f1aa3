/**
 * An opencode-like Chat Completions client on the openai SDK: streaming /v1/chat/completions with
 * `stream_options.include_usage`, `tool_choice: required`, the whole history replayed each turn (the
 * assistant's tool calls, then one `tool` message per result, by `tool_call_id`), and the SDK's own
 * retries (429/5xx, honouring retry-after).
 */
import OpenAI from "openai";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import {
  type ConversationSetup,
  failureOf,
  type LoadConversation,
  statusReportingFetch,
  type ToolCall,
  type TurnControl,
  TurnFailure,
  type TurnInput,
  type TurnReply,
} from "../load-turn.ts";

export class ChatConversation implements LoadConversation {
  readonly protocol = "chat";
  readonly #client: OpenAI;
  readonly #history: ChatCompletionMessageParam[];
  #onStatus: ((status: number) => void) | undefined;

  constructor(private readonly setup: ConversationSetup) {
    this.#client = new OpenAI({
      baseURL: `${setup.edgeUrl}/v1`,
      apiKey: setup.apiKey,
      maxRetries: setup.maxRetries,
      fetch: statusReportingFetch(() => this.#onStatus),
    });
    this.#history = [{ role: "system", content: setup.system }];
  }

  async send(input: TurnInput, control: TurnControl): Promise<TurnReply> {
    this.#onStatus = control.onStatus;
    const added: ChatCompletionMessageParam[] =
      input.kind === "task"
        ? [{ role: "user", content: input.text }]
        : input.results.map((r) => ({ role: "tool", tool_call_id: r.call.id, content: r.output }));
    const messages = [...this.#history, ...added];
    try {
      const { data: stream, response } = await this.#client.chat.completions
        .create(
          {
            model: "frontier-test",
            messages,
            tools: this.setup.tools.map((t) => ({
              type: "function" as const,
              function: { name: t.name, description: t.description, parameters: t.input_schema },
            })),
            tool_choice: "required",
            max_tokens: this.setup.maxTokens,
            stream: true,
            stream_options: { include_usage: true },
          },
          { signal: control.signal },
        )
        .withResponse();
      const calls = new Map<number, ToolCall>();
      let usage: OpenAI.CompletionUsage | undefined;
      let finished = false;
      for await (const chunk of stream) {
        for (const choice of chunk.choices) {
          if ((choice.delta.content ?? "") !== "" || (choice.delta.tool_calls?.length ?? 0) > 0) control.onFirstEvent();
          for (const delta of choice.delta.tool_calls ?? []) {
            const call = calls.get(delta.index) ?? { id: "", name: "", arguments: "" };
            call.id ||= delta.id ?? "";
            call.name ||= delta.function?.name ?? "";
            call.arguments += delta.function?.arguments ?? "";
            calls.set(delta.index, call);
          }
          if (choice.finish_reason) finished = true;
        }
        if (chunk.usage) usage = chunk.usage;
      }
      if (!finished || !usage)
        throw new TurnFailure("stream cut", "the stream ended without a finish_reason and usage");
      const ordered = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
      this.#history.push(...added, {
        role: "assistant",
        content: null,
        tool_calls: ordered.map((c) => ({
          id: c.id,
          type: "function" as const,
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      return {
        calls: ordered,
        promptTokens: usage.prompt_tokens,
        cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
        outputTokens: usage.completion_tokens,
        decision: /decision=([\w-]+)/.exec(response.headers.get("x-frontier-cache") ?? "")?.[1],
      };
    } catch (error) {
      throw failureOf(error, OpenAI);
    } finally {
      this.#onStatus = undefined;
    }
  }

  close(): void {}
}
