/**
 * A Responses turn that is all hidden reasoning (the worker sends only `thinkingEnd`: MiniMax M2's
 * answer cut inside `<think>`), through the real edge in workerd (fake worker): the response carries
 * a `reasoning` item in its SSE and WebSocket streams and its body, and that assistant turn reaches
 * the worker again on a follow-up — from the stored record (`previous_response_id`), from a
 * `store: false` replay of the item (sealed with `include: ["reasoning.encrypted_content"]`), and
 * from a socket's memory.
 */
import { env, exports } from "cloudflare:workers";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, type GenerateRequest, Role, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, LOCAL_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

interface ReasoningItem {
  type: string;
  id: string;
  summary: unknown[];
  content?: { type: string; text: string }[];
  encrypted_content?: string;
}

interface ResponseBody {
  id: string;
  status: string;
  output: ReasoningItem[];
}

/** Every turn: the prompt, a thinking block that streamed no text, cut by max tokens. */
function hiddenReasoning(): FakeWorker {
  return installFakeWorker(async function* ({ request }) {
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: 30, messageId, decision: CacheDecision.COLD } });
    yield event({ case: "thinkingEnd", value: { signature: "" } });
    yield event({
      case: "stop",
      value: { reason: StopReason.MAX_TOKENS, usage: { inputTokens: 30, outputTokens: 12 } },
    });
  });
}

function post(body: Record<string, unknown>): Promise<Response> {
  return call("/v1/responses", {
    method: "POST",
    bearer: true,
    body: { model: "frontier-test", max_output_tokens: 12, ...body },
  });
}

/** The Generate call's conversation as roles and, per message, its blocks' kinds. */
function shape(request: GenerateRequest | undefined) {
  const messages = request?.conversation?.messages ?? [];
  return messages.map((m) => ({ role: m.role, blocks: m.content.map((c) => c.block.case) }));
}

const FOLLOW_UP_SHAPE = [
  { role: Role.USER, blocks: ["text"] },
  { role: Role.ASSISTANT, blocks: ["thinking"] },
  { role: Role.USER, blocks: ["text"] },
];

function thinkingOf(request: GenerateRequest | undefined) {
  const block = request?.conversation?.messages[1]?.content[0]?.block;
  return block?.case === "thinking" ? block.value.thinking : undefined;
}

function sseEvents(text: string): ResponseStreamEvent[] {
  return text
    .split("\n\n")
    .map((block) => block.split("\n").find((line) => line.startsWith("data: ")))
    .filter((line) => line !== undefined)
    .map((line) => JSON.parse(line.slice("data: ".length)) as ResponseStreamEvent);
}

describe("a Responses turn that is all hidden reasoning", () => {
  it("streams its reasoning item over SSE, stores it, and previous_response_id brings the turn back", async () => {
    fake = hiddenReasoning();
    const first = await post({ input: "Thanks.", stream: true, store: true });
    expect(first.status).toBe(200);
    const events = sseEvents(await first.text());
    const items = events.filter(
      (e) => e.type === "response.output_item.added" || e.type === "response.output_item.done",
    );
    expect(items.map((e) => [e.type, "item" in e ? e.item.type : ""])).toEqual([
      ["response.output_item.added", "reasoning"],
      ["response.output_item.done", "reasoning"],
    ]);
    let snapshot: ReturnType<typeof accumulateResponse> | undefined;
    for (const e of events) snapshot = accumulateResponse(e, snapshot);
    expect(snapshot?.status).toBe("incomplete");
    expect(snapshot?.output).toEqual([expect.objectContaining({ type: "reasoning", summary: [] })]);
    const id = snapshot?.id ?? "";

    const stored = await call(`/v1/responses/${id}`, { bearer: true });
    expect(((await stored.json()) as ResponseBody).output.map((item) => item.type)).toEqual(["reasoning"]);

    const second = await post({ input: "Once more?", previous_response_id: id });
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    expect(fake.requests[1]?.sessionId).toBe(fake.requests[0]?.sessionId);
    expect(shape(fake.requests[1])).toEqual(FOLLOW_UP_SHAPE);
    expect(thinkingOf(fake.requests[1])).toBe("");
  });

  it("seals it only when asked, and a store: false replay of the sealed item brings the turn back", async () => {
    fake = hiddenReasoning();
    const plain = (await (await post({ input: "Thanks.", store: false })).json()) as ResponseBody;
    expect(plain.output).toEqual([expect.not.objectContaining({ encrypted_content: expect.anything() })]);

    const include = ["reasoning.encrypted_content"];
    const first = (await (await post({ input: "Thanks.", store: false, include })).json()) as ResponseBody;
    const [item] = first.output;
    expect(item).toMatchObject({ type: "reasoning", summary: [], encrypted_content: expect.stringMatching(/^frv1\./) });

    const replay = [{ role: "user", content: "Thanks." }, item, { role: "user", content: "Once more?" }];
    const second = await post({ input: replay, store: false, include });
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    expect(shape(fake.requests[2])).toEqual(FOLLOW_UP_SHAPE);
    expect(thinkingOf(fake.requests[2])).toBe("");

    // Another tenant's key cannot open it: the item is context, not Frontier's reasoning.
    const foreign = await call("/v1/responses", {
      method: "POST",
      key: "sk-test-other",
      bearer: true,
      body: { model: "frontier-test", max_output_tokens: 12, input: replay, store: false },
    });
    expect(foreign.status).toBe(200);
    await foreign.arrayBuffer();
    expect(shape(fake.requests[3])[1]).toEqual({ role: Role.ASSISTANT, blocks: ["opaque"] });
  });

  it("streams it over a WebSocket, and the socket's memory brings the turn back (store: false)", async () => {
    fake = hiddenReasoning();
    const upgraded = await exports.default.fetch(
      new Request("http://edge.test/v1/responses", {
        headers: { upgrade: "websocket", authorization: `Bearer ${LOCAL_KEY}` },
      }),
    );
    const socket = upgraded.webSocket;
    if (!socket) throw new Error("no webSocket on the 101");
    socket.accept();
    const events: ResponseStreamEvent[] = [];
    let wake: (() => void) | undefined;
    socket.addEventListener("message", (m) => {
      events.push(JSON.parse(m.data as string) as ResponseStreamEvent);
      wake?.();
    });
    const ended = async (count: number) => {
      const terminal = () => events.filter((e) => e.type === "response.incomplete" || e.type === "error");
      while (terminal().length < count) await new Promise<void>((resolve) => (wake = resolve));
      return terminal();
    };
    const create = { type: "response.create", model: "frontier-test", store: false, max_output_tokens: 12 };
    socket.send(JSON.stringify({ ...create, input: "Thanks." }));
    const [done] = await ended(1);
    expect(events.filter((e) => e.type.startsWith("response.output_item.")).map((e) => e.type)).toEqual([
      "response.output_item.added",
      "response.output_item.done",
    ]);
    if (done?.type !== "response.incomplete") throw new Error(`the turn ended with ${done?.type}`);
    expect(done.response.output.map((item) => item.type)).toEqual(["reasoning"]);

    socket.send(JSON.stringify({ ...create, input: "Once more?", previous_response_id: done.response.id }));
    expect((await ended(2))[1]?.type).toBe("response.incomplete");
    expect(shape(fake.requests[1])).toEqual(FOLLOW_UP_SHAPE);
    socket.close();
  });
});
