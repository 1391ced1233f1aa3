/**
 * ResponsesTurn: worker events → Responses stream events. The openai SDK's own accumulator folds
 * the stream, and must arrive at exactly the non-streaming body.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../../edge/core/errors.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { ResponsesTurn } from "../../../edge/protocols/responses/response/stream.ts";
import {
  CacheDecision,
  GenerateEventSchema,
  StopReason,
  WorkerErrorCode,
} from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId, verifyId } from "../../../shared/ids.ts";
import { decodeSseText } from "./sse-text.ts";

type Init = MessageInitShape<typeof GenerateEventSchema>["event"];
const ev = (event: Init) => create(GenerateEventSchema, { event });
const SECRET = "unit-test-secret-0123456789";
const session = newSessionId();

function newTurn() {
  const request = validateResponsesRequest({ model: "m", input: "hi", tools: [{ type: "function", name: "Bash" }] });
  return new ResponsesTurn(request, { idSecret: SECRET, tenant: "local", sessionId: session, createdAt: 1 });
}

const prompt = ev({
  case: "prompt",
  value: { promptTokens: 120, cachedTokens: 100, decision: CacheDecision.LIVE_TOOL_IDS, messageId: "resp_x" },
});

async function run(turn: ResponsesTurn, events: ReturnType<typeof ev>[]): Promise<ResponseStreamEvent[]> {
  let sse = "";
  for (const event of events) for (const out of await turn.push(event)) sse += out.sse;
  return decodeSseText(sse) as ResponseStreamEvent[];
}

describe("ResponsesTurn", () => {
  it("streams reasoning, text and parallel function calls that the SDK folds into the JSON body", async () => {
    const turn = newTurn();
    const events = await run(turn, [
      prompt,
      ev({ case: "keepAlive", value: { prefilledTokens: 1, totalTokens: 2 } }),
      ev({ case: "thinkingDelta", value: { text: "let me " } }),
      ev({ case: "thinkingDelta", value: { text: "think" } }),
      ev({ case: "thinkingEnd", value: { signature: "sig" } }),
      ev({ case: "textDelta", value: { text: "Running." } }),
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
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    let snapshot: ReturnType<typeof accumulateResponse> | undefined;
    for (const event of events) snapshot = accumulateResponse(event, snapshot);
    const body = JSON.parse(JSON.stringify(turn.body()));
    expect(snapshot).toMatchObject(body);
    expect(body.output.map((item: { type: string }) => item.type)).toEqual([
      "reasoning",
      "message",
      "function_call",
      "function_call",
    ]);
    expect(body.output[2]).toMatchObject({ call_id: "call_a", name: "Bash", arguments: '{"command":"ls"}' });
    expect(body.usage).toEqual({
      input_tokens: 120,
      input_tokens_details: { cached_tokens: 100 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 129,
    });
    expect(turn.callIds).toEqual(["call_a", "call_b"]);
    const kinds = await Promise.all(
      body.output.map(async (item: { id: string }) => (await verifyId(SECRET, item.id, "local"))?.session),
    );
    expect(kinds).toEqual([session, session, session, session]);
  });

  it("ends with response.incomplete on max tokens", async () => {
    const turn = newTurn();
    const events = await run(turn, [
      prompt,
      ev({ case: "textDelta", value: { text: "cut" } }),
      ev({ case: "stop", value: { reason: StopReason.MAX_TOKENS, usage: { outputTokens: 1 } } }),
    ]);
    expect(events.at(-1)?.type).toBe("response.incomplete");
    expect(turn.body()).toMatchObject({ status: "incomplete", incomplete_details: { reason: "max_output_tokens" } });
    expect(turn.body().output[0]).toMatchObject({ status: "incomplete" });
  });

  it("turns an unknown call ID into a 400 asking for the full input", async () => {
    const turn = newTurn();
    const error = ev({
      case: "error",
      value: { code: WorkerErrorCode.UNKNOWN_TOOL_USE_ID, message: "x", param: "call_gone" },
    });
    const failure = await run(turn, [error]).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({ status: 400, options: { code: "unknown_call_id" } });
    expect((failure as ApiError).message).toContain("call_gone");
  });

  it("renders an in-stream failure as `error` then `response.failed`", async () => {
    const turn = newTurn();
    await run(turn, [prompt]);
    const events = decodeSseText(turn.streamError(ApiError.overloaded("worker died"))) as ResponseStreamEvent[];
    expect(events.map((e) => e.type)).toEqual(["error", "response.failed"]);
    expect(events[1]).toMatchObject({
      sequence_number: 3,
      response: { status: "failed", error: { message: "worker died" } },
    });
  });
});
