/**
 * The openai SDK's own WebSocket client (`ResponsesWS` from `openai/resources/responses/ws`, over the
 * `ws` package) against the local stack: a function-calling loop on one socket, each follow-up a
 * `response.create` with `previous_response_id` and only the `function_call_output` items
 * (`store: false`, so only the socket remembers the history), every continued turn live (prefilled
 * a small suffix, the worker logging `match=tool-output-ids`); and two `stream_id` lanes running
 * their own loops side by side on the same socket. The SDK's types do not name `stream_id`: the
 * field is sent as an extra key of the event (the SDK serialises the whole object).
 */
import { readFileSync } from "node:fs";
import OpenAI from "openai";
import type {
  Response as OpenAiResponse,
  ResponseInputItem,
  ResponsesClientEvent,
  ResponsesServerEvent,
} from "openai/resources/responses/responses";
import { ResponsesWS } from "openai/resources/responses/ws";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";

const client = new OpenAI({ baseURL: `${inject("edgeUrl")}/v1`, apiKey: LOCAL_API_KEY, maxRetries: 0 });

const lookup = {
  type: "function" as const,
  name: "lookup",
  description: "Look a word up",
  parameters: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
  strict: false,
};
const base = {
  model: "frontier-test",
  instructions: "You are a dictionary agent.",
  tools: [lookup],
  temperature: 0,
  store: false,
};

type ServerEvent = ResponsesServerEvent & { stream_id?: string };

/** One finished turn: its response and every event of its lane, in order. */
interface SocketTurn {
  response: OpenAiResponse;
  events: ServerEvent[];
}

/**
 * The socket's events, routed by lane (`stream_id`, "" for none): `turn` sends one response.create
 * and resolves at its lane's terminal event (completed/incomplete), or rejects on an error event.
 */
class LaneRouter {
  readonly #waiting = new Map<
    string,
    { events: ServerEvent[]; done: (t: SocketTurn) => void; fail: (e: Error) => void }
  >();

  constructor(private readonly ws: ResponsesWS) {
    ws.on("event", (event: ServerEvent) => this.#receive(event));
    ws.on("error", (error) => {
      const lane = (error.error as { stream_id?: string } | undefined)?.stream_id ?? "";
      this.#waiting.get(lane)?.fail(error);
    });
  }

  turn(event: ResponsesClientEvent, lane?: string): Promise<SocketTurn> {
    const key = lane ?? "";
    return new Promise<SocketTurn>((resolve, reject) => {
      const fail = (error: Error) => {
        this.#waiting.delete(key);
        reject(error);
      };
      this.#waiting.set(key, { events: [], done: resolve, fail });
      this.ws.send(lane === undefined ? event : ({ ...event, stream_id: lane } as ResponsesClientEvent));
    });
  }

  #receive(event: ServerEvent): void {
    const key = event.stream_id ?? "";
    const waiting = this.#waiting.get(key);
    if (!waiting) return;
    waiting.events.push(event);
    if (event.type === "response.completed" || event.type === "response.incomplete") {
      this.#waiting.delete(key);
      waiting.done({ response: event.response, events: waiting.events });
    } else if (event.type === "error" || event.type === "response.failed") {
      waiting.fail(new Error(`lane '${key}': ${JSON.stringify(event)}`));
    }
  }
}

const calls = (r: OpenAiResponse) => r.output.filter((item) => item.type === "function_call");
const kvAfter = (r: OpenAiResponse) => (r.usage?.input_tokens ?? 0) + (r.usage?.output_tokens ?? 0);
const prefilled = (r: OpenAiResponse) =>
  (r.usage?.input_tokens ?? 0) - (r.usage?.input_tokens_details.cached_tokens ?? 0);
const outputsFor = (r: OpenAiResponse): ResponseInputItem[] =>
  calls(r)
    .reverse()
    .map((call) => ({
      type: "function_call_output" as const,
      call_id: call.call_id,
      output: `meaning of ${call.call_id.slice(-4)}`,
    }));

/** A continued turn reused the whole previous KV (all but at most its last sampled token) and prefilled only the suffix. */
function expectLive(next: OpenAiResponse, previous: OpenAiResponse): void {
  const cached = next.usage?.input_tokens_details.cached_tokens ?? 0;
  expect(cached).toBeGreaterThanOrEqual(kvAfter(previous) - 1);
  expect(cached).toBeLessThanOrEqual(kvAfter(previous));
  expect(prefilled(next)).toBeGreaterThan(0);
  expect(prefilled(next)).toBeLessThan((next.usage?.input_tokens ?? 0) / 3);
}

let ws: ResponsesWS;
let router: LaneRouter;

// The SDK queues events sent before the socket opens; a refused upgrade surfaces as an error.
beforeAll(() => {
  ws = new ResponsesWS(client);
  router = new LaneRouter(ws);
});
afterAll(() => ws?.close({ code: 1000, reason: "done" }));

describe("openai SDK ResponsesWS: a tool loop over one socket", () => {
  it("continues every turn from the live KV, sending only the new items", async () => {
    const logFile = inject("workerLogFile");
    const logBefore = readFileSync(logFile, "utf8").length;
    const first = await router.turn({
      type: "response.create",
      ...base,
      input: "Look up two words please.",
      tool_choice: "required",
      max_output_tokens: 200,
    });
    expect(first.response.status).toBe("completed");
    expect(first.response.id).toMatch(/^resp_/);
    expect(calls(first.response).length).toBeGreaterThan(0);
    // A first turn starts cold or from a prefix another conversation of the tenant shares (the same
    // instructions and tools: docs/operations/shared-prefixes.md), never from all of its input.
    expect(first.response.usage?.input_tokens_details.cached_tokens).toBeLessThan(
      first.response.usage?.input_tokens ?? 0,
    );
    // The same events as SSE, in order.
    expect(first.events[0]?.type).toBe("response.created");
    const numbers = first.events.map((e) => ("sequence_number" in e ? e.sequence_number : -1));
    expect(numbers).toEqual(numbers.map((_, i) => i));

    const second = await router.turn({
      type: "response.create",
      ...base,
      previous_response_id: first.response.id,
      input: outputsFor(first.response),
      tool_choice: "required",
      max_output_tokens: 200,
    });
    expect(second.response.previous_response_id).toBe(first.response.id);
    expectLive(second.response, first.response);
    expect(calls(second.response).length).toBeGreaterThan(0);

    const third = await router.turn({
      type: "response.create",
      ...base,
      previous_response_id: second.response.id,
      input: outputsFor(second.response),
      tool_choice: "none",
      max_output_tokens: 12,
    });
    expectLive(third.response, second.response);
    expect(calls(third.response)).toEqual([]);

    const decisions = readFileSync(logFile, "utf8")
      .slice(logBefore)
      .split("\n")
      .filter((l) => / (live continuation|live kv cache miss) /.test(l));
    const live = decisions.filter((l) => / live continuation match=tool-output-ids /.test(l));
    expect(live.length, decisions.join("\n")).toBeGreaterThanOrEqual(2);
  });

  it("runs two stream_id lanes side by side, each event carrying its lane, each loop live", async () => {
    const start = (lane: string) =>
      router.turn(
        {
          type: "response.create",
          ...base,
          input: `Lane ${lane}: look up a word.`,
          tool_choice: "required",
          max_output_tokens: 200,
        },
        lane,
      );
    const [a1, b1] = await Promise.all([start("lane-a"), start("lane-b")]);
    for (const [lane, turn] of [
      ["lane-a", a1],
      ["lane-b", b1],
    ] as const) {
      expect(turn.events.every((e) => e.stream_id === lane)).toBe(true);
      expect(calls(turn.response).length).toBeGreaterThan(0);
    }
    expect(a1.response.id).not.toBe(b1.response.id);
    const follow = (lane: string, previous: OpenAiResponse) =>
      router.turn(
        {
          type: "response.create",
          ...base,
          previous_response_id: previous.id,
          input: outputsFor(previous),
          tool_choice: "none",
          max_output_tokens: 12,
        },
        lane,
      );
    const [a2, b2] = await Promise.all([follow("lane-a", a1.response), follow("lane-b", b1.response)]);
    expectLive(a2.response, a1.response);
    expectLive(b2.response, b1.response);
    expect(a2.events.every((e) => e.stream_id === "lane-a")).toBe(true);
    expect(b2.events.every((e) => e.stream_id === "lane-b")).toBe(true);
  });

  it("answers a follow-up naming an unknown response with an error event in OpenAI's shape, the socket staying open", async () => {
    const refused = router.turn({
      type: "response.create",
      ...base,
      previous_response_id: "resp_unknown",
      input: "hello",
      max_output_tokens: 4,
    });
    await expect(refused).rejects.toThrow(/previous_response_not_found/);
    const after = await router.turn({ type: "response.create", ...base, input: "Still there?", max_output_tokens: 4 });
    expect(["completed", "incomplete"]).toContain(after.response.status);
  });
});
