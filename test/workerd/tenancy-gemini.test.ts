/**
 * Run-time keys on the Gemini API (issue 44 with the Gemini adapter): a key issued through the admin
 * API works in every place Gemini clients put it (`x-goog-api-key`, `?key=`, `Authorization: Bearer`),
 * on generateContent, countTokens and the model list; once revoked it is refused by its next request
 * on each of them, in Google's error shape; over a limit the answer is Google's 429 with RetryInfo;
 * the model list shows only the key's allow-list. The clock is frozen (core/clock.ts), never slept on.
 */
import { exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../edge/core/clock.ts";
import type { FakeWorker } from "./fake-worker.ts";
import { gemini } from "./gemini-helpers.ts";
import { admin, newKey, newTenant, wordWorker } from "./tenancy-helpers.ts";

let fake: FakeWorker | undefined;
const realNow = clock.now;
afterEach(() => {
  fake?.restore();
  clock.now = realNow;
});

const CONTENTS = { contents: [{ role: "user", parts: [{ text: "hi" }] }] };

type GoogleError = { error: { code: number; status: string; message: string; details?: unknown[] } };

/** The key in each of the places a Gemini client sends it. */
function placed(key: string, path: string, body?: unknown): Promise<Response>[] {
  const init = body === undefined ? {} : { body };
  return [
    gemini(path, { key, ...init }),
    gemini(path, { key: null, query: `?key=${encodeURIComponent(key)}`, ...init }),
    gemini(path, { key: null, headers: { authorization: `Bearer ${key}` }, ...init }),
  ];
}

/** Every Gemini route a key opens, in every key place: name → status. */
async function everyGeminiRoute(key: string): Promise<Record<string, number[]>> {
  const routes: Record<string, () => Promise<Response>[]> = {
    generateContent: () => placed(key, "models/frontier-test:generateContent", CONTENTS),
    streamGenerateContent: () => placed(key, "models/frontier-test:streamGenerateContent", CONTENTS),
    countTokens: () => placed(key, "models/frontier-test:countTokens", CONTENTS),
    models: () => placed(key, "models"),
    model: () => placed(key, "models/frontier-test"),
  };
  const statuses: Record<string, number[]> = {};
  for (const [name, requests] of Object.entries(routes)) {
    statuses[name] = [];
    for (const pending of requests()) {
      const response = await pending;
      await response.arrayBuffer();
      statuses[name].push(response.status);
    }
  }
  return statuses;
}

const every = (status: number) => ({
  generateContent: [status, status, status],
  streamGenerateContent: [status, status, status],
  countTokens: [status, status, status],
  models: [status, status, status],
  model: [status, status, status],
});

describe("run-time keys on the Gemini API", () => {
  it("serves an issued key in every key place and refuses it on its next request once revoked", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const key = await newKey(tenant);
    expect(await everyGeminiRoute(key.value)).toEqual(every(200));
    expect((await admin(`/admin/tenants/${tenant}/keys/${key.id}`, { method: "DELETE" })).status).toBe(200);
    const refused = await gemini("models/frontier-test:generateContent", { key: key.value, body: CONTENTS });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as GoogleError).error).toMatchObject({
      code: 401,
      status: "UNAUTHENTICATED",
      message: "This API key has been revoked",
    });
    const turns = fake.requests.length;
    expect(await everyGeminiRoute(key.value)).toEqual(every(401));
    expect(fake.requests).toHaveLength(turns);
  });

  it("refuses a key the edge never issued with Google's message, before any authority is asked", async () => {
    const tenant = await newTenant();
    const key = await newKey(tenant);
    const forged = `${key.value.slice(0, -1)}${key.value.endsWith("a") ? "b" : "a"}`;
    for (const pending of placed(forged, "models/frontier-test:generateContent", "{not json")) {
      const response = await pending;
      expect(response.status).toBe(401);
      expect(((await response.json()) as GoogleError).error).toMatchObject({
        status: "UNAUTHENTICATED",
        message: "API key not valid. Please pass a valid API key.",
      });
    }
  });

  it("answers a request over the key's rate with 429 RESOURCE_EXHAUSTED, RetryInfo and retry-after", async () => {
    fake = wordWorker();
    const now = Date.now();
    clock.now = () => now;
    const tenant = await newTenant();
    const key = await newKey(tenant, { limits: { requests_per_minute: 1 } });
    const first = await gemini("models/frontier-test:generateContent", { key: key.value, body: CONTENTS });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    const second = await gemini("models/frontier-test:generateContent", { key: key.value, body: CONTENTS });
    expect(second.status).toBe(429);
    const retryAfter = Number(second.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    const body = (await second.json()) as GoogleError;
    expect(body.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });
    expect(body.error.message).toContain("requests per minute");
    expect(body.error.details).toContainEqual({
      "@type": "type.googleapis.com/google.rpc.RetryInfo",
      retryDelay: `${retryAfter}s`,
    });
    expect(fake.requests).toHaveLength(1);
  });

  it("lists only the models the key may use and answers another model's turn with 404 NOT_FOUND", async () => {
    fake = wordWorker();
    const tenant = await newTenant();
    const narrow = await newKey(tenant, { models: ["frontier-large"] });
    const listed = (await (await gemini("models", { key: narrow.value })).json()) as { models: unknown[] };
    expect(listed.models).toEqual([]);
    expect((await gemini("models/frontier-test", { key: narrow.value })).status).toBe(404);
    for (const method of ["generateContent", "countTokens"]) {
      const response = await gemini(`models/frontier-test:${method}`, { key: narrow.value, body: CONTENTS });
      expect(response.status, method).toBe(404);
      expect(((await response.json()) as GoogleError).error.status, method).toBe("NOT_FOUND");
    }
    expect(fake.requests).toHaveLength(0);
    // The same key on the Anthropic side of the edge is refused the same model the same way.
    const anthropic = await exports.default.fetch(
      new Request("http://edge.test/v1/models", { headers: { authorization: `Bearer ${narrow.value}` } }),
    );
    expect(((await anthropic.json()) as { data: unknown[] }).data).toEqual([]);
  });
});
