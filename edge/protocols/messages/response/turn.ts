/** The Anthropic TurnRenderer: the stream assembler, its SSE encoding and the JSON accumulator. */
import type { GenerateEvent, PromptProcessed } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { ApiError } from "../../../core/errors.ts";
import type { SealKeys } from "../../../server-tools/sealed-hit.ts";
import type { RenderedEvent, TurnRenderer } from "../../../turn/turn-driver.ts";
import { TurnAssembler } from "./assembler.ts";
import { MessageAccumulator } from "./render-json.ts";
import { anthropicResultBlock } from "./server-tool-results.ts";
import { encodeAnthropicError, encodeAnthropicEvent, SSE_PING } from "./sse.ts";

export class AnthropicTurn implements TurnRenderer {
  readonly assembler: TurnAssembler;
  readonly #accumulator = new MessageAccumulator();
  readonly keepAlive = SSE_PING;

  constructor(
    model: string,
    readonly requestId: string,
    /** Seals search hits' encrypted_content for this tenant. */
    readonly keys: SealKeys,
  ) {
    this.assembler = new TurnAssembler(model);
  }

  get prompt(): PromptProcessed | undefined {
    return this.assembler.prompt;
  }

  get stopped(): boolean {
    return this.assembler.stopped;
  }

  get toolCallIds(): readonly string[] {
    return this.assembler.toolUseIds;
  }

  logFields(): Record<string, unknown> {
    const hosted = this.assembler.serverToolUseIds.length;
    return {
      stop: this.assembler.stopReason ?? "incomplete",
      tools: this.assembler.toolUseIds.length,
      ...(hosted > 0 ? { hosted } : {}),
    };
  }

  async push(event: GenerateEvent): Promise<RenderedEvent[]> {
    const e = event.event;
    const result = e.case === "serverToolResult" ? await anthropicResultBlock(e.value, this.keys) : undefined;
    return this.assembler.push(event, result).map((out) => {
      this.#accumulator.push(out);
      return { sse: encodeAnthropicEvent(out), ping: out.type === "ping", final: out.type === "message_stop" };
    });
  }

  finish(): void {
    this.assembler.finish();
  }

  body(): unknown {
    return this.#accumulator.result();
  }

  streamError(error: ApiError): string {
    return encodeAnthropicError(error, this.requestId);
  }
}
