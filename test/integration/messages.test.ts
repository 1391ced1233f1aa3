/**
 * The full request path over real sockets: HTTP → edge (workerd) → SessionDO → gRPC-Web → GPU
 * worker → llama.cpp (tiny generated model) and back, as JSON and as Anthropic SSE.
 */
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { postJson, randomHint } from "../support/api.ts";
import { decodeSseStream } from "../support/sse-decoder.ts";

const edge = inject("edgeUrl");
const messagesUrl = `${edge}/v1/messages`;

interface MessageJson {
  id: string;
  type: string;
  role: string;
  content: { type: string; text?: string; id?: string; name?: string; input?: Record<string, unknown> }[];
  stop_reason: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number };
}

const weatherTool = {
  name: "get_weather",
  description: "Weather for a city",
  input_schema: {
    type: "object",
    properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
    required: ["city", "unit"],
  },
};

async function sseEvents(res: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const out: { event: string; data: Record<string, unknown> }[] = [];
  for await (const e of decodeSseStream(res.body!)) {
    out.push({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> });
  }
  return out;
}

describe("POST /v1/messages through the whole stack", () => {
  it("returns a JSON message with usage and a request-id", async () => {
    const res = await postJson(messagesUrl, {
      model: "frontier-test",
      max_tokens: 12,
      messages: [{ role: "user", content: "Say something" }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("request-id")).toMatch(/^req_/);
    const body = (await res.json()) as MessageJson;
    expect(body.type).toBe("message");
    expect(body.role).toBe("assistant");
    expect(body.id).toMatch(/^msg_/);
    expect(["end_turn", "max_tokens"]).toContain(body.stop_reason);
    expect(body.usage.output_tokens).toBeGreaterThan(0);
    expect(body.usage.output_tokens).toBeLessThanOrEqual(12);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
  });

  it("streams Anthropic SSE events in order (with ?beta=true)", async () => {
    const res = await postJson(`${messagesUrl}?beta=true`, {
      model: "frontier-test",
      max_tokens: 10,
      stream: true,
      messages: [{ role: "user", content: "Stream please" }],
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = await sseEvents(res);
    const names = events.map((e) => e.event).filter((n) => n !== "ping");
    expect(names[0]).toBe("message_start");
    expect(names.at(-2)).toBe("message_delta");
    expect(names.at(-1)).toBe("message_stop");
    const delta = events.find((e) => e.event === "message_delta")?.data as { usage: { output_tokens: number } };
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
  });

  it("forces a schema-valid tool call with tool_choice any, several when parallel", async () => {
    const res = await postJson(messagesUrl, {
      model: "frontier-test",
      max_tokens: 400,
      tools: [weatherTool],
      tool_choice: { type: "any" },
      messages: [{ role: "user", content: "Weather in Paris?" }],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as MessageJson;
    expect(body.stop_reason).toBe("tool_use");
    const calls = body.content.filter((c) => c.type === "tool_use");
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      expect(call.id).toMatch(/^toolu_/);
      expect(call.name).toBe("get_weather");
      expect(typeof call.input?.city).toBe("string");
      expect(["c", "f"]).toContain(call.input?.unit);
    }
  });

  it("continues a conversation from the live KV on its sticky worker", async () => {
    const hint = randomHint();
    const headers = { "x-claude-code-session-id": hint };
    const first = { role: "user", content: "First question, fairly long so the prefix matters a little." };
    const res1 = await postJson(
      messagesUrl,
      { model: "m", max_tokens: 6, temperature: 0, messages: [first] },
      { headers },
    );
    const body1 = (await res1.json()) as MessageJson;
    const prompt1 = body1.usage.input_tokens + body1.usage.cache_read_input_tokens;
    const replay = [
      first,
      { role: "assistant", content: body1.content },
      { role: "user", content: "And a second one." },
    ];
    const res2 = await postJson(messagesUrl, { model: "m", max_tokens: 6, messages: replay }, { headers });
    expect(res2.status).toBe(200);
    const body2 = (await res2.json()) as MessageJson;
    expect(body2.usage.cache_read_input_tokens).toBeGreaterThanOrEqual(prompt1 - 1);
    expect(res2.headers.get("x-frontier-cache")).toContain("live");
  });

  it("rejects bad input with 400 invalid_request_error naming the field", async () => {
    const res = await postJson(messagesUrl, { model: "m", max_tokens: 5, messages: [{ role: "user" }] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("invalid_request_error");
    expect(body.error.message).toContain("messages.0.content");
  });

  it("answers count_tokens with the rendered prompt size", async () => {
    const res = await postJson(`${messagesUrl}/count_tokens`, {
      model: "m",
      messages: [{ role: "user", content: "Count me" }],
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { input_tokens: number };
    expect(body.input_tokens).toBeGreaterThan(3);
  });

  it("cancels generation when the client disconnects, freeing the session", async () => {
    const hint = randomHint();
    const headers = { "x-claude-code-session-id": hint };
    // A random model may end its turn on its own before the abort reaches the worker: then the
    // attempt proves nothing and is repeated (each attempt must end one way or the other).
    let cancelled = false;
    for (let round = 0; round < 4 && !cancelled; round++) {
      const controller = new AbortController();
      const res = await postJson(
        messagesUrl,
        { model: "m", max_tokens: 20000, stream: true, messages: [{ role: "user", content: "Go on forever" }] },
        { headers, signal: controller.signal },
      );
      const requestId = res.headers.get("request-id");
      const reader = res.body!.getReader();
      await reader.read();
      controller.abort();
      // The worker logs the cancellation of exactly this request (its turn ends early), or its own end.
      let endedByItself = false;
      for (let attempt = 0; attempt < 150 && !cancelled && !endedByItself; attempt++) {
        const lines = readFileSync(inject("workerLogFile"), "utf8").split("\n");
        const mine = lines.filter((l) => l.includes(`request=${requestId}`));
        cancelled = mine.some((l) => /cancelled|stop=CANCELLED/.test(l));
        endedByItself = mine.some((l) => /turn finished stop=(END_TURN|MAX_TOKENS|STOP_SEQUENCE)/.test(l));
        if (!cancelled && !endedByItself) await new Promise((r) => setTimeout(r, 100));
      }
    }
    expect(cancelled).toBe(true);
    // The same session must accept a new request promptly (not 409 busy) once the cancel lands.
    let status = 0;
    for (let attempt = 0; attempt < 40; attempt++) {
      const next = await postJson(
        messagesUrl,
        { model: "m", max_tokens: 2, messages: [{ role: "user", content: "again" }] },
        { headers },
      );
      status = next.status;
      await next.body?.cancel();
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(status).toBe(200);
  });
});
