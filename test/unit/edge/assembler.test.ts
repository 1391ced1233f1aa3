import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../edge/core/errors.ts";
import { TurnAssembler } from "../../../edge/protocols/messages/response/assembler.ts";
import type { AnthropicStreamEvent } from "../../../edge/protocols/messages/response/events.ts";
import { MessageAccumulator } from "../../../edge/protocols/messages/response/render-json.ts";
import {
  CacheDecision,
  GenerateEventSchema,
  StopReason,
  WorkerErrorCode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

type Init = MessageInitShape<typeof GenerateEventSchema>["event"];
const ev = (event: Init) => create(GenerateEventSchema, { event });

const prompt = ev({
  case: "prompt",
  value: { promptTokens: 120, cachedTokens: 100, decision: CacheDecision.LIVE_TOOL_IDS, messageId: "msg_1" },
});

function run(events: ReturnType<typeof ev>[]): { out: AnthropicStreamEvent[]; assembler: TurnAssembler } {
  const assembler = new TurnAssembler("frontier-test");
  const out = events.flatMap((e) => assembler.push(e));
  return { out, assembler };
}

describe("TurnAssembler", () => {
  it("renders thinking, text and tool calls as Anthropic events", () => {
    const { out, assembler } = run([
      prompt,
      ev({ case: "keepAlive", value: { prefilledTokens: 10, totalTokens: 20 } }),
      ev({ case: "thinkingDelta", value: { text: "let me " } }),
      ev({ case: "thinkingDelta", value: { text: "think" } }),
      ev({ case: "thinkingEnd", value: { signature: "frontier.v1.sig" } }),
      ev({ case: "textDelta", value: { text: "Running." } }),
      ev({ case: "toolCallStart", value: { index: 0, id: "toolu_a", name: "Bash" } }),
      ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"command":' } }),
      ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '"ls"}' } }),
      ev({ case: "toolCallEnd", value: { index: 0 } }),
      ev({ case: "toolCallStart", value: { index: 1, id: "toolu_b", name: "Bash" } }),
      ev({ case: "toolCallEnd", value: { index: 1 } }),
      ev({
        case: "stop",
        value: { reason: StopReason.TOOL_USE, usage: { inputTokens: 20, cachedTokens: 100, outputTokens: 9 } },
      }),
    ]);
    expect(out.map((e) => (e.type === "content_block_delta" ? `${e.type}:${e.delta.type}` : e.type))).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta:thinking_delta",
      "content_block_delta:thinking_delta",
      "content_block_delta:signature_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta:text_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_delta:input_json_delta",
      "content_block_delta:input_json_delta",
      "content_block_stop",
      "content_block_start",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(out[0]).toEqual({
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        content: [],
        model: "frontier-test",
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 0 },
      },
    });
    expect(out[10]).toEqual({
      type: "content_block_start",
      index: 2,
      content_block: { type: "tool_use", id: "toolu_a", name: "Bash", input: {} },
    });
    expect(out.at(-2)).toEqual({
      type: "message_delta",
      delta: { stop_reason: "tool_use", stop_sequence: null },
      usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 9 },
    });
    expect(assembler.toolUseIds).toEqual(["toolu_a", "toolu_b"]);

    const accumulator = new MessageAccumulator();
    for (const e of out) accumulator.push(e);
    expect(accumulator.result()).toEqual({
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "frontier-test",
      content: [
        { type: "thinking", thinking: "let me think", signature: "frontier.v1.sig" },
        { type: "text", text: "Running." },
        { type: "tool_use", id: "toolu_a", name: "Bash", input: { command: "ls" } },
        { type: "tool_use", id: "toolu_b", name: "Bash", input: {} },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100, output_tokens: 9 },
    });
  });

  it("reports the matched stop sequence", () => {
    const { out } = run([
      prompt,
      ev({ case: "textDelta", value: { text: "a" } }),
      ev({ case: "stop", value: { reason: StopReason.STOP_SEQUENCE, stopSequence: "END" } }),
    ]);
    expect(out.find((e) => e.type === "message_delta")).toMatchObject({
      delta: { stop_reason: "stop_sequence", stop_sequence: "END" },
    });
  });

  it("maps worker errors by code", () => {
    const cases: [WorkerErrorCode, number, string][] = [
      [WorkerErrorCode.UNKNOWN_TOOL_USE_ID, 400, "invalid_request_error"],
      [WorkerErrorCode.INVALID_REQUEST, 400, "invalid_request_error"],
      [WorkerErrorCode.CONTEXT_TOO_LONG, 400, "invalid_request_error"],
      [WorkerErrorCode.OVERLOADED, 529, "overloaded_error"],
      [WorkerErrorCode.SESSION_BUSY, 409, "invalid_request_error"],
      [WorkerErrorCode.INTERNAL, 500, "api_error"],
    ];
    for (const [code, status, type] of cases) {
      const assembler = new TurnAssembler("m");
      let caught: unknown;
      try {
        assembler.push(
          ev({ case: "error", value: { code, message: "boom", param: "messages.3.content.0.tool_use_id" } }),
        );
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ApiError);
      expect((caught as ApiError).status).toBe(status);
      expect((caught as ApiError).type).toBe(type);
      expect((caught as ApiError).message).toContain("messages.3.content.0.tool_use_id: boom");
    }
  });

  it("rejects protocol violations and early ends", () => {
    expect(() => run([ev({ case: "textDelta", value: { text: "x" } })])).toThrow(/protocol error/);
    expect(() => run([prompt, ev({ case: "toolCallDelta", value: { index: 3, argumentsJson: "{}" } })])).toThrow(
      /protocol error/,
    );
    const { assembler } = run([prompt]);
    expect(() => assembler.finish()).toThrow(ApiError);
  });
});
