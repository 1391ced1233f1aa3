/**
 * A Claude-Code-like client on the Anthropic SDK: streaming /v1/messages, `tool_choice: any`, the
 * whole history replayed each turn with the tool results in one user message, its session id in
 * `x-claude-code-session-id`, and the SDK's own retries (429/529/5xx, honouring retry-after).
 */
import Anthropic from "@anthropic-ai/sdk";
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

export class MessagesConversation implements LoadConversation {
  readonly protocol = "messages";
  readonly #client: Anthropic;
  readonly #history: Anthropic.MessageParam[] = [];
  #onStatus: ((status: number) => void) | undefined;

  constructor(private readonly setup: ConversationSetup) {
    this.#client = new Anthropic({
      baseURL: setup.edgeUrl,
      apiKey: setup.apiKey,
      maxRetries: setup.maxRetries,
      fetch: statusReportingFetch(() => this.#onStatus),
    });
  }

  async send(input: TurnInput, control: TurnControl): Promise<TurnReply> {
    this.#onStatus = control.onStatus;
    const messages: Anthropic.MessageParam[] = [...this.#history, userMessage(input)];
    try {
      const { data: stream, response } = await this.#client.messages
        .create(
          {
            model: "frontier-test",
            max_tokens: this.setup.maxTokens,
            system: this.setup.system,
            tools: this.setup.tools as Anthropic.Tool[],
            tool_choice: { type: "any" },
            messages,
            stream: true,
          },
          { signal: control.signal, headers: { "x-claude-code-session-id": this.setup.hint } },
        )
        .withResponse();
      const blocks = new Map<number, { id: string; name: string; input: string; text: string; type: string }>();
      let usage = { input: 0, cached: 0, output: 0 };
      let stopped = false;
      for await (const event of stream) {
        if (event.type === "content_block_start") {
          control.onFirstEvent();
          const b = event.content_block;
          blocks.set(event.index, {
            type: b.type,
            id: b.type === "tool_use" ? b.id : "",
            name: b.type === "tool_use" ? b.name : "",
            input: "",
            text: "",
          });
        } else if (event.type === "content_block_delta") {
          const block = blocks.get(event.index);
          if (block && event.delta.type === "input_json_delta") block.input += event.delta.partial_json;
          else if (block && event.delta.type === "text_delta") block.text += event.delta.text;
        } else if (event.type === "message_delta") {
          usage = {
            input: event.usage.input_tokens ?? 0,
            cached: event.usage.cache_read_input_tokens ?? 0,
            output: event.usage.output_tokens,
          };
        } else if (event.type === "message_stop") stopped = true;
      }
      if (!stopped) throw new TurnFailure("stream cut", "the stream ended without message_stop");
      const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
      const calls: ToolCall[] = ordered
        .filter((b) => b.type === "tool_use")
        .map((b) => ({ id: b.id, name: b.name, arguments: b.input || "{}" }));
      const content: Anthropic.ContentBlockParam[] = ordered.flatMap((b): Anthropic.ContentBlockParam[] =>
        b.type === "tool_use"
          ? [{ type: "tool_use", id: b.id, name: b.name, input: JSON.parse(b.input || "{}") as unknown }]
          : b.type === "text" && b.text !== ""
            ? [{ type: "text", text: b.text }]
            : [],
      );
      this.#history.push(messages[messages.length - 1] as Anthropic.MessageParam, { role: "assistant", content });
      return {
        calls,
        // Anthropic's input_tokens are the prompt tokens not read from the cache.
        promptTokens: usage.input + usage.cached,
        cachedTokens: usage.cached,
        outputTokens: usage.output,
        decision: /decision=([\w-]+)/.exec(response.headers.get("x-frontier-cache") ?? "")?.[1],
      };
    } catch (error) {
      throw failureOf(error, Anthropic);
    } finally {
      this.#onStatus = undefined;
    }
  }

  close(): void {}
}

function userMessage(input: TurnInput): Anthropic.MessageParam {
  if (input.kind === "task") return { role: "user", content: input.text };
  return {
    role: "user",
    content: input.results.map((r) => ({
      type: "tool_result" as const,
      tool_use_id: r.call.id,
      content: r.output,
      is_error: false,
    })),
  };
}
