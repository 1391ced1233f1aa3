/**
 * A turn whose sampled text is all reasoning the parser shows nothing of (MiniMax M2 always thinks;
 * a turn cut by max_output_tokens inside `<think>`): the worker sends only `thinkingEnd`. The
 * Responses turn still carries a `reasoning` item (empty summary, sealed only on request), as the
 * Messages turn carries its thinking block, so a record or a replay keeps that assistant turn. A
 * turn that showed nothing at all answers with an empty message, for the same reason.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { AnthropicTurn } from "../../../edge/protocols/messages/response/turn.ts";
import { openReasoning, unsealReasoningItems } from "../../../edge/protocols/responses/request/encrypted-reasoning.ts";
import { toConversation } from "../../../edge/protocols/responses/request/normalize.ts";
import type { ResponsesRequest } from "../../../edge/protocols/responses/request/types.ts";
import { validateResponsesRequest } from "../../../edge/protocols/responses/request/validate.ts";
import { outputAsInput } from "../../../edge/protocols/responses/response/response-object.ts";
import { ResponsesTurn } from "../../../edge/protocols/responses/response/stream.ts";
import { GenerateEventSchema, Role, StopReason } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { newSessionId, verifyId } from "../../../shared/ids.ts";
import { decodeSseText } from "./sse-text.ts";

type Init = MessageInitShape<typeof GenerateEventSchema>["event"];
const ev = (event: Init) => create(GenerateEventSchema, { event });
const SECRET = "unit-test-secret-0123456789";
const session = newSessionId();

/** What the worker sends for an answer turn cut inside hidden reasoning. */
const HIDDEN_REASONING_TURN = [
  ev({ case: "prompt", value: { promptTokens: 317, cachedTokens: 296, messageId: "resp_x" } }),
  ev({ case: "thinkingEnd", value: { signature: "" } }),
  ev({ case: "stop", value: { reason: StopReason.MAX_TOKENS, usage: { inputTokens: 21, outputTokens: 12 } } }),
];

function request(extra: Record<string, unknown> = {}): ResponsesRequest {
  return validateResponsesRequest({ model: "m", input: "Thanks.", max_output_tokens: 12, ...extra });
}

async function run(turn: ResponsesTurn, events = HIDDEN_REASONING_TURN): Promise<ResponseStreamEvent[]> {
  let sse = "";
  for (const event of events) for (const out of await turn.push(event)) sse += out.sse;
  return decodeSseText(sse) as ResponseStreamEvent[];
}

function newTurn(body: ResponsesRequest): ResponsesTurn {
  return new ResponsesTurn(body, { idSecret: SECRET, tenant: "local", sessionId: session, createdAt: 1 });
}

describe("a turn that is all hidden reasoning", () => {
  it("streams one reasoning item (added … done) that the SDK folds into the JSON body", async () => {
    const turn = newTurn(request());
    const events = await run(turn);
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    let snapshot: ReturnType<typeof accumulateResponse> | undefined;
    for (const event of events) snapshot = accumulateResponse(event, snapshot);
    const body = JSON.parse(JSON.stringify(turn.body()));
    expect(snapshot).toMatchObject(body);
    expect(body.status).toBe("incomplete");
    expect(body.output).toEqual([
      {
        type: "reasoning",
        id: expect.stringMatching(/^rs_/),
        status: "completed",
        summary: [],
        content: [{ type: "reasoning_text", text: "" }],
      },
    ]);
    expect((await verifyId(SECRET, body.output[0].id, "local"))?.session).toBe(session);
    const added = events.find((e) => e.type === "response.output_item.added");
    expect(added).toMatchObject({ output_index: 0, item: { type: "reasoning", id: body.output[0].id, summary: [] } });
  });

  it("keeps the turn when the response is rebuilt as history (store: true, previous_response_id)", async () => {
    const turn = newTurn(request());
    await run(turn);
    const history = [{ type: "message" as const, role: "user" as const, text: "Thanks." }];
    const items = [...history, ...outputAsInput(turn.body().output)];
    const follow = request({ input: "Once more?" });
    const messages = toConversation(follow, [...items, ...follow.input]).messages;
    expect(messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER]);
    expect(messages[1]?.content.map((c) => c.block)).toEqual([
      expect.objectContaining({ case: "thinking", value: expect.objectContaining({ thinking: "" }) }),
    ]);
  });

  it("seals the reasoning only when asked, and a store: false replay of the item keeps the turn", async () => {
    expect((await run(newTurn(request()))).at(-2)).not.toHaveProperty("item.encrypted_content");
    const turn = newTurn(request({ include: ["reasoning.encrypted_content"], store: false }));
    await run(turn);
    const item = turn.body().output[0];
    if (item?.type !== "reasoning") throw new Error("no reasoning item");
    expect(await openReasoning(SECRET, "local", item.encrypted_content ?? "")).toBe("");
    const replay = request({
      store: false,
      input: [
        { role: "user", content: "Thanks." },
        JSON.parse(JSON.stringify(item)),
        { role: "user", content: "Again?" },
      ],
    });
    const messages = toConversation(replay, await unsealReasoningItems(SECRET, "local", replay.input)).messages;
    expect(messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER]);
    expect(messages[1]?.content[0]?.block).toMatchObject({ case: "thinking", value: { thinking: "" } });
  });

  it("is the same turn Messages renders: one (empty) thinking block", async () => {
    const turn = new AnthropicTurn("m", "req_1", { secret: SECRET, tenant: "local" });
    for (const event of HIDDEN_REASONING_TURN) await turn.push(event);
    expect(turn.body()).toMatchObject({ content: [{ type: "thinking", thinking: "" }], stop_reason: "max_tokens" });
  });

  it("answers a turn that showed nothing at all (no thinking block either) with an empty message", async () => {
    const turn = newTurn(request());
    const [start, , stop] = HIDDEN_REASONING_TURN;
    if (!start || !stop) throw new Error("fixture");
    const events = await run(turn, [start, stop]);
    let snapshot: ReturnType<typeof accumulateResponse> | undefined;
    for (const event of events) snapshot = accumulateResponse(event, snapshot);
    const body = JSON.parse(JSON.stringify(turn.body()));
    expect(snapshot).toMatchObject(body);
    expect(body.output).toEqual([
      expect.objectContaining({
        type: "message",
        status: "incomplete",
        content: [{ type: "output_text", text: "", annotations: [], logprobs: [] }],
      }),
    ]);
    const follow = request({ input: "Once more?" });
    const items = [{ type: "message" as const, role: "user" as const, text: "Thanks." }, ...outputAsInput(body.output)];
    const messages = toConversation(follow, [...items, ...follow.input]).messages;
    expect(messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER]);
  });

  it("still adds no empty reasoning item after one that streamed text", async () => {
    const turn = newTurn(request());
    const [start, end, stop] = HIDDEN_REASONING_TURN;
    if (!start || !end || !stop) throw new Error("fixture");
    await run(turn, [start, ev({ case: "thinkingDelta", value: { text: "plan" } }), end, stop]);
    expect(turn.body().output).toEqual([
      expect.objectContaining({ content: [{ type: "reasoning_text", text: "plan" }] }),
    ]);
  });
});
