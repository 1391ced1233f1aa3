/**
 * ChatTurn: worker events → `chat.completion.chunk` SSE. The openai SDK's own SSE decoder and chunk
 * accumulator (ChatCompletionStream) fold the stream, byte-split at awkward places, and must arrive
 * at exactly the non-streaming `chat.completion` body.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import { Stream } from "openai/streaming";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../edge/core/errors.ts";
import { ChatTurn } from "../../../edge/protocols/chat/stream.ts";
import { validateChatRequest } from "../../../edge/protocols/chat/validate.ts";
import {
  CacheDecision,
  GenerateEventSchema,
  StopReason,
  WorkerErrorCode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";

type Init = MessageInitShape<typeof GenerateEventSchema>["event"];
const ev = (event: Init) => create(GenerateEventSchema, { event });

function newTurn(extra: Record<string, unknown> = {}) {
  const request = validateChatRequest({
    model: "frontier-test",
    messages: [{ role: "user", content: "hi" }],
    tools: [{ type: "function", function: { name: "Bash", parameters: { type: "object" } } }],
    stream: true,
    stream_options: { include_usage: true },
    ...extra,
  });
  return new ChatTurn(request, 1_700_000_000);
}

const prompt = ev({
  case: "prompt",
  value: { promptTokens: 120, cachedTokens: 100, decision: CacheDecision.LIVE_TOOL_IDS, messageId: "chatcmpl-x" },
});

function sseOf(turn: ChatTurn, events: ReturnType<typeof ev>[]): string {
  let sse = "";
  for (const event of events) for (const out of turn.push(event)) sse += out.sse;
  return sse;
}

/** Bytes split every `step` bytes (through UTF-8 sequences and `data:` lines), as a network would. */
function chunked(text: string, step: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + step));
      at += step;
    },
  });
}

async function accumulate(sse: string, step: number) {
  const stream = Stream.fromSSEResponse(new Response(chunked(sse, step)), new AbortController());
  const chunks: unknown[] = [];
  const runner = ChatCompletionStream.fromReadableStream(stream.toReadableStream());
  runner.on("chunk", (chunk) => chunks.push(chunk));
  return { completion: await runner.finalChatCompletion(), chunks };
}

const toolTurn = [
  prompt,
  ev({ case: "keepAlive", value: { prefilledTokens: 1, totalTokens: 2 } }),
  ev({ case: "thinkingDelta", value: { text: "let me é " } }),
  ev({ case: "thinkingDelta", value: { text: "think" } }),
  ev({ case: "thinkingEnd", value: { signature: "sig" } }),
  ev({ case: "textDelta", value: { text: "Running ✓." } }),
  ev({ case: "toolCallStart", value: { index: 0, id: "call_a", name: "Bash" } }),
  ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"command":' } }),
  ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '"ls"}' } }),
  ev({ case: "toolCallEnd", value: { index: 0 } }),
  ev({ case: "toolCallStart", value: { index: 1, id: "call_b", name: "Bash" } }),
  ev({ case: "toolCallDelta", value: { index: 1, argumentsJson: "{}" } }),
  ev({ case: "toolCallEnd", value: { index: 1 } }),
  ev({
    case: "stop",
    value: { reason: StopReason.TOOL_USE, usage: { inputTokens: 20, cachedTokens: 100, outputTokens: 9 } },
  }),
];

describe("ChatTurn", () => {
  it.each([1, 7, 64, 100_000])(
    "streams reasoning, text and parallel calls the SDK folds into the JSON body (split every %i bytes)",
    async (step) => {
      const turn = newTurn();
      const sse = sseOf(turn, toolTurn);
      expect(sse.endsWith("data: [DONE]\n\n")).toBe(true);
      const { completion, chunks } = await accumulate(sse, step);
      const body = turn.body();
      expect(completion).toMatchObject({ id: body.id, model: "frontier-test", usage: body.usage });
      const message = completion.choices[0]?.message as unknown as Record<string, unknown>;
      expect(message).toMatchObject({ role: "assistant", content: "Running ✓." });
      expect(message.tool_calls).toEqual(body.choices[0]?.message.tool_calls);
      expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
      // The SDK's accumulator does not concatenate `reasoning_content` (llama.cpp/vLLM's field);
      // clients that read it join the deltas, as here.
      const deltas = chunks as { choices: { delta: { reasoning_content?: string } }[] }[];
      const reasoning = deltas.map((c) => c.choices[0]?.delta.reasoning_content ?? "").join("");
      expect(reasoning).toBe(body.choices[0]?.message.reasoning_content);
      expect(reasoning).toBe("let me é think");
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens_details: { cached_tokens: 100 } } });
    },
  );

  it("renders the JSON body with usage, reasoning and tool calls", () => {
    const turn = newTurn({ stream: false, stream_options: undefined });
    const sse = sseOf(turn, toolTurn);
    expect(sse).not.toContain('"usage"');
    expect(turn.body()).toEqual({
      id: "chatcmpl-x",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "frontier-test",
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: "Running ✓.",
            reasoning_content: "let me é think",
            refusal: null,
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "Bash", arguments: '{"command":"ls"}' } },
              { id: "call_b", type: "function", function: { name: "Bash", arguments: "{}" } },
            ],
          },
          logprobs: null,
          finish_reason: "tool_calls",
        },
      ],
      usage: {
        prompt_tokens: 120,
        completion_tokens: 9,
        total_tokens: 129,
        prompt_tokens_details: { cached_tokens: 100 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
    expect(turn.toolCallIds).toEqual(["call_a", "call_b"]);
  });

  it("ends with finish_reason length on max tokens, stop on a stop sequence", async () => {
    for (const [reason, finish] of [
      [StopReason.MAX_TOKENS, "length"],
      [StopReason.STOP_SEQUENCE, "stop"],
      [StopReason.END_TURN, "stop"],
    ] as const) {
      const turn = newTurn();
      const sse = sseOf(turn, [
        prompt,
        ev({ case: "textDelta", value: { text: "cut" } }),
        ev({ case: "stop", value: { reason, usage: { outputTokens: 1 } } }),
      ]);
      const { completion } = await accumulate(sse, 5);
      expect(completion.choices[0]?.finish_reason).toBe(finish);
      expect(turn.body().choices[0]?.message.content).toBe("cut");
    }
  });

  it("marks the chunk that ends the turn final, so the turn is recorded before the client sees it", () => {
    const turn = newTurn();
    const outs = toolTurn.flatMap((event) => turn.push(event));
    expect(outs.filter((out) => out.final).length).toBe(1);
    expect(outs.at(-1)?.final).toBe(true);
    expect(outs.find((out) => out.ping)?.sse).toBe(": keep-alive\n\n");
  });

  it("turns an unknown tool_call_id into a 400 asking for the full history", () => {
    const turn = newTurn();
    const error = ev({
      case: "error",
      value: { code: WorkerErrorCode.UNKNOWN_TOOL_USE_ID, message: "x", param: "call_gone" },
    });
    let failure: unknown;
    try {
      turn.push(error);
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 400, options: { code: "unknown_tool_call_id", param: "messages" } });
    expect((failure as ApiError).message).toContain("call_gone");
  });

  it("renders an in-stream failure as an OpenAI error object the SDK raises", async () => {
    const turn = newTurn();
    const sse = sseOf(turn, [prompt]) + turn.streamError(ApiError.overloaded("worker died"));
    const failure = await accumulate(sse, 9).catch((e: unknown) => e);
    expect(failure).toMatchObject({ message: expect.stringContaining("worker died") });
  });
});
