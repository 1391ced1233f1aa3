/**
 * The Gemini API through the real edge (workerd) and a fake worker: routes, Gemini's key (header,
 * `?key=`, checked before the body is read), Google's error shape on every `/v1beta` path, function
 * calls with self-routing `call_…` IDs (also as Gemini CLI wraps them, `NAME__<id>`), SSE and the
 * streamed JSON array. The model list, countTokens and the `/v1` routes: gemini-models.test.ts.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { verifyId } from "../../shared/ids.ts";
import { type FakeWorker, sleep } from "./fake-worker.ts";
import { callsThenText, type GeminiResponse, gemini, SHELL, sseChunks } from "./gemini-helpers.ts";
import { LOCAL_KEY, OTHER_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

describe("POST /v1beta/models/{model}:generateContent", () => {
  it("mints call_ IDs with the session; functionResponses naming them (as Gemini CLI wraps them too) route back to it", async () => {
    fake = callsThenText();
    const user = { role: "user", parts: [{ text: "run both" }] };
    const first = await gemini("models/frontier-test:generateContent", { body: { contents: [user], tools: [SHELL] } });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-frontier-route")).toMatch(/^new; epoch=1/);
    const answer = (await first.json()) as GeminiResponse;
    const sessionId = fake.requests[0]?.sessionId ?? "";
    expect(fake.requests[0]?.idKinds).toMatchObject({ message: "msg", toolCall: "call" });
    expect(await verifyId(SECRET, answer.responseId, "local")).toEqual({ kind: "msg", session: sessionId });
    const calls = answer.candidates[0]?.content.parts.map((p) => p.functionCall as { id: string; name: string }) ?? [];
    expect(calls.map((c) => c.name)).toEqual(["run_shell_command", "run_shell_command"]);
    for (const c of calls) expect(await verifyId(SECRET, c.id, "local")).toEqual({ kind: "call", session: sessionId });
    expect(answer.candidates[0]?.finishReason).toBe("STOP");
    await sleep(20);
    expect((await env.SESSIONS.getByName(sessionId).get("local"))?.frontierToolUseIds).toEqual(calls.map((c) => c.id));

    // Gemini CLI replays the model turn (its first call carrying a synthetic signature) and answers
    // with functionResponses; newer releases wrap each ID as NAME__<id>.
    const [a, b] = calls;
    const contents = [
      user,
      {
        role: "model",
        parts: [
          {
            functionCall: { id: a?.id, name: a?.name, args: { command: "echo one" } },
            thoughtSignature: "skip_thought_signature_validator",
          },
          { functionCall: { id: `run_shell_command__${b?.id}`, name: b?.name, args: { command: "echo two" } } },
        ],
      },
      {
        role: "user",
        parts: [
          {
            functionResponse: {
              id: `run_shell_command__${b?.id}`,
              name: "run_shell_command",
              response: { output: "two" },
            },
          },
          { functionResponse: { id: a?.id, name: "run_shell_command", response: { output: "one" } } },
        ],
      },
    ];
    const second = await gemini("models/frontier-test:streamGenerateContent", {
      query: "?alt=sse",
      body: { contents, tools: [SHELL] },
    });
    expect(second.status).toBe(200);
    expect(second.headers.get("content-type")).toContain("text/event-stream");
    expect(second.headers.get("x-frontier-route")).toBe("tool-result; epoch=1");
    const chunks = sseChunks(await second.text());
    expect(fake.requests[1]?.sessionId).toBe(sessionId);
    expect(chunks.at(-1)?.candidates[0]?.finishReason).toBe("STOP");
    expect(chunks.at(-1)?.usageMetadata).toMatchObject({
      promptTokenCount: 50,
      cachedContentTokenCount: 40,
      totalTokenCount: 51,
    });
    expect(chunks.flatMap((c) => c.candidates[0]?.content.parts ?? [])).toEqual([{ text: "done" }]);
    // The worker got the bare IDs, in the conversation it continues from.
    const results = fake.requests[1]?.conversation?.messages.at(-1)?.content.map((c) => c.block.value);
    expect(results).toEqual([
      expect.objectContaining({ toolUseId: b?.id, content: "two" }),
      expect.objectContaining({ toolUseId: a?.id, content: "one" }),
    ]);
    const replayed = fake.requests[1]?.conversation?.messages[1]?.content.map((c) => c.block.value);
    expect(replayed).toEqual([expect.objectContaining({ id: a?.id }), expect.objectContaining({ id: b?.id })]);
  });

  it("streams a JSON array without alt=sse, and takes the key as ?key=", async () => {
    fake = callsThenText();
    const response = await gemini("models/frontier-test:streamGenerateContent", {
      key: null,
      query: `?key=${LOCAL_KEY}`,
      body: { contents: [{ parts: [{ text: "hi" }] }] },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    const chunks = JSON.parse(await response.text()) as GeminiResponse[];
    expect(chunks.at(-1)?.candidates[0]?.finishReason).toBe("STOP");
  });

  it("passes declared hosted tools through as not offered, and the sampling fields to the worker", async () => {
    fake = callsThenText();
    const response = await gemini("models/frontier-test:generateContent", {
      body: {
        contents: [{ role: "user", parts: [{ text: "hi" }] }],
        tools: [SHELL, { googleSearch: {} }],
        systemInstruction: { parts: [{ text: "be brief" }] },
        generationConfig: { temperature: 0.5, topK: 3, maxOutputTokens: 9, stopSequences: ["X"], seed: 4 },
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-tools-not-offered")).toBe("googleSearch");
    const request = fake.requests[0];
    expect(request?.conversation?.system).toEqual(["be brief"]);
    expect(request?.conversation?.tools.map((t) => t.name)).toEqual(["run_shell_command"]);
    expect(request?.sampling).toMatchObject({
      temperature: 0.5,
      topK: 3,
      maxTokens: 9,
      stopSequences: ["X"],
      seed: 4n,
    });
  });
});

describe("the Gemini API's key and error shape", () => {
  it("authenticates from the key before reading the body: 401 UNAUTHENTICATED for none or a wrong one", async () => {
    fake = callsThenText();
    for (const key of [null, "", "sk-wrong"]) {
      const response = await gemini("models/frontier-test:generateContent", { key, body: "{not json" });
      expect(response.status).toBe(401);
      const body = (await response.json()) as { error: { code: number; status: string; message: string } };
      expect(body.error).toMatchObject({ code: 401, status: "UNAUTHENTICATED" });
    }
    // Anthropic's header is not the Gemini API's key.
    const anthropic = await gemini("models/frontier-test:generateContent", {
      key: null,
      headers: { "x-api-key": LOCAL_KEY },
      body: { contents: [{ parts: [{ text: "hi" }] }] },
    });
    expect(anthropic.status).toBe(401);
    expect(fake.requests).toHaveLength(0);
  });

  it("answers bad input with 400 INVALID_ARGUMENT naming the field, unknown routes with 404 NOT_FOUND", async () => {
    const bad = await gemini("models/frontier-test:generateContent", {
      body: { contents: [{ role: "user", parts: [{ text: "x" }] }], generationConfig: { candidateCount: 3 } },
    });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { error: { code: number; status: string; message: string; details: unknown[] } };
    expect(body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    expect(body.error.message).toContain("generationConfig.candidateCount");
    expect(body.error.details).toEqual([
      expect.objectContaining({
        fieldViolations: [expect.objectContaining({ field: "generationConfig.candidateCount" })],
      }),
    ]);
    const notJson = await gemini("models/frontier-test:generateContent", { body: "{nope" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { status: string } }).error.status).toBe("INVALID_ARGUMENT");
    for (const [path, method] of [
      ["models/frontier-test:embedContent", "POST"],
      ["tunedModels", "GET"],
      ["models/unknown-model", "GET"],
      ["models/bad%E0%A4:generateContent", "POST"],
      ["models/bad%zz", "GET"],
    ] as const) {
      const response = await gemini(path, { method, ...(method === "POST" ? { body: {} } : {}) });
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as { error: { status: string } }).error.status, path).toBe("NOT_FOUND");
    }
    const wrongMethod = await gemini("models", { method: "POST", body: {} });
    expect(wrongMethod.status).toBe(405);
    expect(((await wrongMethod.json()) as { error: { status: string } }).error.status).toBe("INVALID_ARGUMENT");
  });

  it("answers a worker the pool cannot reach as 503 UNAVAILABLE with a RetryInfo", async () => {
    const response = await gemini("models/frontier-test:countTokens", {
      body: { contents: [{ parts: [{ text: "hi" }] }] },
    });
    expect(response.status).toBe(503);
    const body = (await response.json()) as { error: { status: string; details: unknown[] } };
    expect(body.error.status).toBe("UNAVAILABLE");
    expect(body.error.details).toContainEqual(
      expect.objectContaining({ "@type": "type.googleapis.com/google.rpc.RetryInfo" }),
    );
  });

  it("keeps another tenant's call IDs from routing: they are unknown there", async () => {
    fake = callsThenText();
    const first = (await (
      await gemini("models/frontier-test:generateContent", {
        body: { contents: [{ parts: [{ text: "go" }] }], tools: [SHELL] },
      })
    ).json()) as GeminiResponse;
    const call = first.candidates[0]?.content.parts[0]?.functionCall as { id: string };
    const contents = [
      { role: "user", parts: [{ text: "go" }] },
      { role: "model", parts: [{ functionCall: { id: call.id, name: "run_shell_command", args: {} } }] },
      {
        role: "user",
        parts: [{ functionResponse: { id: call.id, name: "run_shell_command", response: { output: "x" } } }],
      },
    ];
    const other = await gemini("models/frontier-test:generateContent", {
      key: OTHER_KEY,
      body: { contents, tools: [SHELL] },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get("x-frontier-route")).toMatch(/^new;/);
    expect(fake.requests[1]?.sessionId).not.toBe(fake.requests[0]?.sessionId);
  });
});
