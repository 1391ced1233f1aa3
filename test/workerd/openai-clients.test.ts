/** OpenAI-protocol clients through a fake worker: Chat Completions (routing by tool_call_id, side requests, error shapes) and Codex's default Responses request. */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId, verifyId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker, sleep } from "./fake-worker.ts";
import { call } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

const BASH = { type: "function", function: { name: "Bash", parameters: { type: "object" } } };

function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: "frontier-test", messages: [{ role: "user", content: "hi" }], tools: [BASH], ...extra };
}

/**
 * A worker whose first turn on a session calls Bash, and whose later turns answer with text. Like a
 * worker without a search provider, it names the declared hosted tools it did not offer.
 */
function toolThenText() {
  const turns = new Map<string, number>();
  return installFakeWorker(async function* ({ request }) {
    const n = turns.get(request.sessionId) ?? 0;
    turns.set(request.sessionId, n + 1);
    const messageId = await mintId(SECRET, "chatcmpl", request.tenantId, request.sessionId);
    yield event({
      case: "prompt",
      value: {
        promptTokens: 40,
        cachedTokens: n * 30,
        messageId,
        decision: CacheDecision.COLD,
        serverToolsNotOffered: (request.conversation?.serverTools ?? []).map((t) => t.type),
      },
    });
    if (n === 0) {
      const id = await mintId(SECRET, "call", request.tenantId, request.sessionId);
      yield event({ case: "toolCallStart", value: { index: 0, id, name: "Bash" } });
      yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"command":"echo hi"}' } });
      yield event({ case: "toolCallEnd", value: { index: 0 } });
      yield event({
        case: "stop",
        value: { reason: StopReason.TOOL_USE, usage: { inputTokens: 40, outputTokens: 5 } },
      });
    } else {
      yield event({ case: "textDelta", value: { text: "done" } });
      yield event({
        case: "stop",
        value: { reason: StopReason.END_TURN, usage: { inputTokens: 10, cachedTokens: 30, outputTokens: 1 } },
      });
    }
  });
}

interface Completion {
  id: string;
  object: string;
  choices: {
    message: { content: string | null; tool_calls?: { id: string; function: { name: string } }[] };
    finish_reason: string;
  }[];
  usage: { prompt_tokens: number; prompt_tokens_details: { cached_tokens: number } };
}

describe("POST /v1/chat/completions", () => {
  it("mints chatcmpl-/call_ IDs with the session and routes the tool message's tool_call_id back to it", async () => {
    fake = toolThenText();
    const first = await call("/v1/chat/completions", { method: "POST", bearer: true, body: chatBody() });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-request-id")).toMatch(/^req_/);
    const completion = (await first.json()) as Completion;
    const sessionId = fake.requests[0]?.sessionId ?? "";
    expect(fake.requests[0]?.idKinds).toMatchObject({ message: "chatcmpl", toolCall: "call" });
    expect(completion.object).toBe("chat.completion");
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(await verifyId(SECRET, completion.id, "local")).toEqual({ kind: "chatcmpl", session: sessionId });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBeNull();
    const callId = choice?.message.tool_calls?.[0]?.id ?? "";
    await sleep(20);
    expect((await env.SESSIONS.getByName(sessionId).get("local"))?.frontierToolUseIds).toEqual([callId]);

    const messages = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: callId, type: "function", function: { name: "Bash", arguments: '{"command":"echo hi"}' } }],
      },
      { role: "tool", tool_call_id: callId, content: "hi\n" },
    ];
    const second = await call("/v1/chat/completions", {
      method: "POST",
      bearer: true,
      body: chatBody({ messages, stream: true, stream_options: { include_usage: true } }),
    });
    expect(second.status).toBe(200);
    expect(second.headers.get("x-frontier-route")).toBe("tool-result; epoch=1");
    expect(second.headers.get("content-type")).toContain("text/event-stream");
    const text = await second.text();
    expect(fake.requests[1]?.sessionId).toBe(sessionId);
    const data = text
      .split("\n\n")
      .filter((b) => b.startsWith("data: "))
      .map((b) => b.slice(6));
    expect(data.at(-1)).toBe("[DONE]");
    const usage = JSON.parse(data.at(-2) ?? "{}") as { choices: unknown[]; usage: Completion["usage"] };
    expect(usage.choices).toEqual([]);
    expect(usage.usage.prompt_tokens_details.cached_tokens).toBe(30);
    // The tool message became a tool result of the user turn the worker continues from.
    const last = fake.requests[1]?.conversation?.messages.at(-1);
    expect(last?.content[0]?.block).toMatchObject({
      case: "toolResult",
      value: { toolUseId: callId, content: "hi\n" },
    });
  });

  it("branches a side request that replays the main turn with its own system prompt (Qwen Code's memory extraction)", async () => {
    fake = toolThenText();
    const main = [{ role: "system", content: "You are the main agent." }];
    const first = (await (
      await call("/v1/chat/completions", {
        method: "POST",
        bearer: true,
        body: chatBody({ messages: [...main, { role: "user", content: "hi" }] }),
      })
    ).json()) as Completion;
    const mainSession = fake.requests[0]?.sessionId ?? "";
    const callId = first.choices[0]?.message.tool_calls?.[0]?.id ?? "";
    await sleep(20);
    const replay = [
      { role: "user", content: "hi" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: callId, type: "function", function: { name: "Bash", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: callId, content: "ok" },
      { role: "assistant", content: "done" },
      { role: "user", content: "Extract memories." },
    ];
    const side = await call("/v1/chat/completions", {
      method: "POST",
      bearer: true,
      body: chatBody({ messages: [{ role: "system", content: "You extract memories." }, ...replay], tools: [] }),
    });
    expect(side.headers.get("x-frontier-route")).toBe("branch; epoch=1");
    await side.arrayBuffer();
    const sideSession = fake.requests[1]?.sessionId;
    expect(sideSession).not.toBe(mainSession);
    await sleep(20);
    const [mainInfo, sideInfo] = await Promise.all([
      env.SESSIONS.getByName(mainSession).get("local"),
      env.SESSIONS.getByName(sideSession ?? "").get("local"),
    ]);
    expect(sideInfo?.workerUrl).toBe(mainInfo?.workerUrl);
    expect(mainInfo?.turns).toBe(1);
    expect(mainInfo?.frontierToolUseIds).toEqual([callId]);
    // The main conversation's tool result still continues the main session.
    const next = await call("/v1/chat/completions", {
      method: "POST",
      bearer: true,
      body: chatBody({ messages: [...main, ...replay.slice(0, 3)] }),
    });
    expect(next.headers.get("x-frontier-route")).toBe("tool-result; epoch=1");
    await next.arrayBuffer();
    expect(fake.requests[2]?.sessionId).toBe(mainSession);
  });

  it("places by opencode's x-session-affinity header", async () => {
    fake = toolThenText();
    const affinity = `ses_${crypto.randomUUID()}`;
    const headers = { "x-session-affinity": affinity, "x-session-id": affinity };
    const response = await call("/v1/chat/completions", { method: "POST", bearer: true, headers, body: chatBody() });
    expect(response.headers.get("x-frontier-route")).toBe("hint; epoch=1");
    await response.arrayBuffer();
  });

  it("answers errors in OpenAI's shape on OpenAI paths, 404s included", async () => {
    const expectOpenAi = async (response: Response, status: number, param?: string) => {
      expect(response.status).toBe(status);
      expect(response.headers.get("x-request-id")).toMatch(/^req_/);
      const body = (await response.json()) as {
        type?: string;
        error: { message: string; type: string; param: string | null };
      };
      expect(body.type).toBeUndefined();
      expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
      if (param !== undefined) expect(body.error.param).toBe(param);
      return body.error;
    };
    await expectOpenAi(
      await call("/v1/chat/completions", { method: "POST", bearer: true, body: chatBody({ n: 2 }) }),
      400,
      "n",
    );
    const image = { role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] };
    await expectOpenAi(
      await call("/v1/chat/completions", { method: "POST", bearer: true, body: chatBody({ messages: [image] }) }),
      400,
      "messages.0.content.0.type",
    );
    await expectOpenAi(await call("/v1/chat/completions", { method: "GET", bearer: true }), 405);
    await expectOpenAi(await call("/v1/chat/completions", { method: "POST", key: null, body: chatBody() }), 401);
    await expectOpenAi(await call("/v1/embeddings", { method: "POST", bearer: true, body: {} }), 404);
    await expectOpenAi(await call("/v1/responses/compactx/y", { bearer: true }), 404);
    await expectOpenAi(await call("/v1/models/nope", { bearer: true }), 404);
    // Anthropic clients on the shared models path keep Anthropic's shape.
    const anthropic = await call("/v1/models/nope", { headers: { "anthropic-version": "2023-06-01" } });
    expect(((await anthropic.json()) as { type: string }).type).toBe("error");
  });
});

describe("Codex's default Responses request", () => {
  it("offers namespace functions, not hosted tools, says so in a header", async () => {
    fake = toolThenText();
    const body = {
      model: "frontier-test",
      stream: false,
      store: false,
      include: ["reasoning.encrypted_content"],
      input: [{ type: "message", role: "user", content: [{ type: "input_text", text: "hi" }] }],
      tools: [
        { type: "function", name: "exec_command", parameters: { type: "object" } },
        {
          type: "namespace",
          name: "multi_agent_v1",
          tools: [{ type: "function", name: "wait_agent", parameters: {} }],
        },
        { type: "web_search", external_web_access: false },
      ],
    };
    const response = await call("/v1/responses", {
      method: "POST",
      bearer: true,
      headers: { "session-id": crypto.randomUUID() },
      body,
    });
    expect(response.status).toBe(200);
    // web_search goes to the worker as a hosted tool; this one has no provider and says so.
    expect(response.headers.get("x-frontier-tools-not-offered")).toBe("web_search");
    expect(fake.requests[0]?.conversation?.serverTools.map((t) => t.name)).toEqual(["web_search"]);
    expect(response.headers.get("x-frontier-route")).toBe("hint; epoch=1");
    await response.arrayBuffer();
    expect(fake.requests[0]?.conversation?.tools.map((t) => t.name)).toEqual([
      "exec_command",
      "multi_agent_v1.wait_agent",
    ]);
  });
});
