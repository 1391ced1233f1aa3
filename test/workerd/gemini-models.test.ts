/**
 * The Gemini API's model list, countTokens, and its routes under `/v1` (where @google/genai 2.x and
 * later send them) through the real edge (workerd) and a fake worker.
 */
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { callsThenText, type GeminiResponse, gemini } from "./gemini-helpers.ts";
import { LOCAL_KEY } from "./helpers.ts";

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

describe("the Gemini API under /v1 (where @google/genai 2.x and later send it)", () => {
  const v1 = (path: string, headers: Record<string, string>, body?: unknown) =>
    exports.default.fetch(
      new Request(`http://edge.test/v1/${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );

  it("serves the model methods, and the model list to a Gemini key while others keep theirs", async () => {
    fake = callsThenText();
    const key = { "x-goog-api-key": LOCAL_KEY };
    const generated = await v1("models/frontier-test:generateContent", key, {
      contents: [{ parts: [{ text: "hi" }] }],
    });
    expect(generated.status).toBe(200);
    expect(((await generated.json()) as GeminiResponse).candidates[0]?.finishReason).toBe("STOP");
    const refused = await v1("models/frontier-test:generateContent", {}, { contents: [] });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { status: string } }).error.status).toBe("UNAUTHENTICATED");
    fake.restore();
    fake = installFakeWorker(() => [], {
      health: () => ({ ready: true, workerId: "fake", modelName: "m", contextSize: 4096 }),
    });
    expect(await (await v1("models", key)).json()).toMatchObject({ models: [{ name: "models/frontier-test" }] });
    expect(await (await v1("models/frontier-test", key)).json()).toMatchObject({ name: "models/frontier-test" });
    const anthropic = (await (await v1("models", { "x-api-key": LOCAL_KEY })).json()) as { data: { id: string }[] };
    expect(anthropic.data[0]?.id).toBe("frontier-test");
    const openai = await v1("models/unknown", { authorization: `Bearer ${LOCAL_KEY}` });
    expect(openai.status).toBe(404);
    expect(((await openai.json()) as { error: { type: string } }).error.type).toBe("not_found_error");
  });
});

describe("countTokens and models", () => {
  it("counts on a worker: contents, or a whole generateContentRequest", async () => {
    fake = installFakeWorker(() => [], { inputTokens: 42 });
    for (const body of [
      { contents: [{ parts: [{ text: "hi" }] }] },
      { generateContentRequest: { model: "models/frontier-test", contents: [{ parts: [{ text: "hi" }] }] } },
    ]) {
      const response = await gemini("models/frontier-test:countTokens", { body });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        totalTokens: 42,
        promptTokensDetails: [{ modality: "TEXT", tokenCount: 42 }],
      });
    }
  });

  it("lists the served models as Gemini Model resources", async () => {
    fake = installFakeWorker(() => [], {
      health: () => ({ ready: true, workerId: "fake", modelName: "m", contextSize: 8192 }),
    });
    const list = (await (await gemini("models")).json()) as { models: { name: string; inputTokenLimit?: number }[] };
    expect(list.models[0]).toMatchObject({ name: "models/frontier-test", inputTokenLimit: 8192 });
    const one = await gemini("models/frontier-test");
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({
      name: "models/frontier-test",
      supportedGenerationMethods: expect.arrayContaining(["generateContent"]),
    });
    expect((await gemini("models", { key: null })).status).toBe(401);
  });
});
