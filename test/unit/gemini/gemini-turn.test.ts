/**
 * GeminiTurn: worker events → `GenerateContentResponse` chunks. The @google/genai SDK's own stream
 * reader (through its `httpOptions.fetch`) reads the SSE, byte-split at awkward places (through
 * UTF-8 sequences and `data:` lines, keep-alives between events), and folds to exactly the parts of
 * the non-streaming response; the JSON-array framing parses as one JSON array of the same chunks.
 * Also: the error shape (Google's status names, BadRequest and RetryInfo details), in-stream errors
 * the SDK raises, thoughts only on request, and a cut call.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type GenerateContentResponse, GoogleGenAI } from "@google/genai";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../edge/core/check.ts";
import { ApiError, toApiError } from "../../../edge/core/errors.ts";
import { googleErrorBody, googleHttpStatus } from "../../../edge/protocols/gemini/errors.ts";
import {
  JSON_ARRAY_FRAMING,
  SSE_FRAMING,
  type StreamFraming,
} from "../../../edge/protocols/gemini/response/framing.ts";
import { GeminiTurn } from "../../../edge/protocols/gemini/response/turn.ts";
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
  value: { promptTokens: 120, cachedTokens: 100, decision: CacheDecision.LIVE_TOOL_IDS, messageId: "msg_x" },
});
const stop = (reason: StopReason, thinkingTokens = 0) =>
  ev({
    case: "stop",
    value: { reason, usage: { inputTokens: 20, cachedTokens: 100, outputTokens: 9, thinkingTokens } },
  });

const toolTurn = [
  prompt,
  ev({ case: "keepAlive", value: { prefilledTokens: 1, totalTokens: 2 } }),
  ev({ case: "thinkingDelta", value: { text: "let me é " } }),
  ev({ case: "thinkingDelta", value: { text: "think" } }),
  ev({ case: "thinkingEnd", value: { signature: "frontier.v1.sig" } }),
  ev({ case: "textDelta", value: { text: "Running " } }),
  ev({ case: "keepAlive", value: { prefilledTokens: 1, totalTokens: 2 } }),
  ev({ case: "textDelta", value: { text: "✓." } }),
  ev({ case: "toolCallStart", value: { index: 0, id: "call_a", name: "run_shell_command" } }),
  ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"command":' } }),
  ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '"echo é"}' } }),
  ev({ case: "toolCallEnd", value: { index: 0 } }),
  ev({ case: "toolCallStart", value: { index: 1, id: "call_b", name: "run_shell_command" } }),
  ev({ case: "toolCallDelta", value: { index: 1, argumentsJson: '{"command":"ls"}' } }),
  ev({ case: "toolCallEnd", value: { index: 1 } }),
  stop(StopReason.TOOL_USE, 4),
];

function render(events: ReturnType<typeof ev>[], framing: StreamFraming = SSE_FRAMING, includeThoughts = true) {
  const turn = new GeminiTurn("frontier-test", includeThoughts, framing);
  let text = "";
  for (const event of events) for (const out of turn.push(event)) text += out.sse;
  return { turn, text };
}

/** Bytes split every `step` bytes, as a network would. */
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

/** The SDK, its every request answered by `respond` (no network). */
function sdk(respond: () => Response) {
  return new GoogleGenAI({
    apiKey: "sk-test",
    httpOptions: { baseUrl: "http://frontier.invalid", fetch: async () => respond() },
  });
}

async function streamed(sse: string, step: number): Promise<GenerateContentResponse[]> {
  const ai = sdk(() => new Response(chunked(sse, step), { headers: { "content-type": "text/event-stream" } }));
  const chunks: GenerateContentResponse[] = [];
  for await (const chunk of await ai.models.generateContentStream({ model: "frontier-test", contents: "hi" }))
    chunks.push(chunk);
  return chunks;
}

/** Parts of the chunks joined as a client does: adjacent texts (and thoughts) into one. */
function fold(chunks: GenerateContentResponse[]) {
  const parts: Record<string, unknown>[] = [];
  for (const chunk of chunks) {
    for (const part of chunk.candidates?.[0]?.content?.parts ?? []) {
      const last = parts.at(-1);
      if (
        last &&
        part.text !== undefined &&
        typeof last.text === "string" &&
        last.thought === part.thought &&
        !last.thoughtSignature
      ) {
        last.text += part.text;
        if (part.thoughtSignature) last.thoughtSignature = part.thoughtSignature;
      } else parts.push({ ...part });
    }
  }
  return parts;
}

describe("GeminiTurn", () => {
  it("streams SSE the SDK reads at any split into exactly the non-streaming response's parts", async () => {
    const { turn, text } = render(toolTurn);
    const body = turn.body();
    const ai = sdk(() => Response.json(body));
    const whole = await ai.models.generateContent({ model: "frontier-test", contents: "hi" });
    expect(whole.functionCalls).toEqual([
      { id: "call_a", name: "run_shell_command", args: { command: "echo é" } },
      { id: "call_b", name: "run_shell_command", args: { command: "ls" } },
    ]);
    expect(whole.candidates?.[0]?.content?.parts?.slice(0, 2)).toEqual([
      { text: "let me é think", thought: true, thoughtSignature: "frontier.v1.sig" },
      { text: "Running ✓." },
    ]);
    expect(whole.usageMetadata).toEqual({
      promptTokenCount: 120,
      cachedContentTokenCount: 100,
      candidatesTokenCount: 5,
      thoughtsTokenCount: 4,
      totalTokenCount: 129,
      promptTokensDetails: [{ modality: "TEXT", tokenCount: 120 }],
      cacheTokensDetails: [{ modality: "TEXT", tokenCount: 100 }],
    });
    expect(whole.responseId).toBe("msg_x");
    expect(turn.toolCallIds).toEqual(["call_a", "call_b"]);
    for (const step of [1, 2, 3, 7, 64, 100_000]) {
      const chunks = await streamed(text, step);
      expect(fold(chunks), `step ${step}`).toEqual(body.candidates[0]?.content?.parts);
      // The finish reason and usage ride on the last chunk only, as Gemini's do.
      expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe("STOP");
      expect(chunks.at(-1)?.usageMetadata?.cachedContentTokenCount).toBe(100);
      expect(chunks.slice(0, -1).some((c) => c.candidates?.[0]?.finishReason || c.usageMetadata)).toBe(false);
      expect(chunks.every((c) => c.responseId === "msg_x" && c.modelVersion === "frontier-test")).toBe(true);
    }
  });

  it("sends a bare line break as the SSE keep-alive (a `:` comment stalls the reader Gemini CLI bundles)", () => {
    const { text } = render([prompt, ev({ case: "keepAlive", value: {} }), stop(StopReason.END_TURN)]);
    expect(text.startsWith("\ndata: {")).toBe(true);
    expect(text).not.toContain(": keep-alive");
  });

  it("frames a stream without alt=sse as one JSON array of the same chunks", async () => {
    const sse = render(toolTurn).text;
    const array = render(toolTurn, JSON_ARRAY_FRAMING).text;
    const chunks = JSON.parse(array) as GenerateContentResponse[];
    const dataLines = sse
      .split("\r\n\r\n")
      .map((event) => event.trim())
      .filter((event) => event.startsWith("data: "))
      .map((event) => JSON.parse(event.slice("data: ".length)) as unknown);
    expect(chunks).toEqual(dataLines);
    expect(chunks).toHaveLength((await streamed(sse, 64)).length);
    expect(
      JSON.parse(
        render([prompt, ev({ case: "keepAlive", value: {} }), stop(StopReason.END_TURN)], JSON_ARRAY_FRAMING).text,
      ),
    ).toHaveLength(1);
  });

  it("leaves thoughts out unless includeThoughts asked for them", () => {
    const parts = render(toolTurn, SSE_FRAMING, false).turn.body().candidates[0]?.content?.parts ?? [];
    expect(parts.some((p) => "thought" in p)).toBe(false);
    expect(parts[0]).toEqual({ text: "Running ✓." });
  });

  it("ends a turn whose call was cut off as MALFORMED_FUNCTION_CALL, without the call", () => {
    const { turn } = render([
      prompt,
      ev({ case: "toolCallStart", value: { index: 0, id: "call_a", name: "f" } }),
      ev({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"command": "ec' } }),
      ev({ case: "toolCallEnd", value: { index: 0 } }),
      stop(StopReason.MAX_TOKENS),
    ]);
    expect(turn.body().candidates[0]).toMatchObject({
      finishReason: "MALFORMED_FUNCTION_CALL",
      content: { parts: [] },
    });
    expect(turn.toolCallIds).toEqual([]);
  });

  it("maps the stop reason: max tokens, stop sequence", () => {
    expect(render([prompt, stop(StopReason.MAX_TOKENS)]).turn.body().candidates[0]?.finishReason).toBe("MAX_TOKENS");
    expect(render([prompt, stop(StopReason.STOP_SEQUENCE)]).turn.body().candidates[0]?.finishReason).toBe("STOP");
  });

  it("raises a worker error; after the stream started the error is a chunk the SDK throws as an ApiError", async () => {
    const { turn, text } = render([prompt, ev({ case: "textDelta", value: { text: "partial" } })]);
    expect(() =>
      turn.push(ev({ case: "error", value: { code: WorkerErrorCode.OVERLOADED, message: "busy" } })),
    ).toThrow(ApiError);
    const failed = text + turn.streamError(ApiError.overloaded("busy"));
    await expect(streamed(failed, 5)).rejects.toMatchObject({ status: 503 });
    const array = render([prompt], JSON_ARRAY_FRAMING).turn.streamError(ApiError.overloaded("busy"));
    expect(JSON.parse(array)).toEqual([{ error: expect.objectContaining({ code: 503, status: "UNAVAILABLE" }) }]);
  });
});

describe("Google's error shape", () => {
  it("names the status, and the field of a 400 as a BadRequest field violation", () => {
    const error = toApiError(new ValidationError(["contents", 0, "role"], "Input should be 'user' or 'model'"), {
      requestId: "r",
    });
    expect(googleErrorBody(error)).toEqual({
      error: {
        code: 400,
        message: "contents.0.role: Input should be 'user' or 'model'",
        status: "INVALID_ARGUMENT",
        details: [
          {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            fieldViolations: [{ field: "contents.0.role", description: "Input should be 'user' or 'model'" }],
          },
        ],
      },
    });
  });

  it("answers overload as 503 UNAVAILABLE and a rate limit as RESOURCE_EXHAUSTED, each with its RetryInfo", () => {
    const overloaded = ApiError.overloaded("no worker", 5);
    expect(googleHttpStatus(overloaded)).toBe(503);
    expect(googleErrorBody(overloaded).error).toMatchObject({
      code: 503,
      status: "UNAVAILABLE",
      details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "5s" }],
    });
    const limited = new ApiError("rate_limit_error", "slow down", { retryAfter: 2 });
    expect(googleErrorBody(limited).error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });
    expect(googleErrorBody(new ApiError("authentication_error", "no")).error.status).toBe("UNAUTHENTICATED");
    expect(googleErrorBody(ApiError.notFound("x")).error.status).toBe("NOT_FOUND");
    expect(googleErrorBody(ApiError.busy("busy")).error).toMatchObject({ code: 409, status: "ABORTED" });
    expect(googleErrorBody(ApiError.internal()).error.status).toBe("INTERNAL");
  });
});
