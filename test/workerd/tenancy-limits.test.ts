/**
 * Limits at admission (issue 44 item 3), as each protocol shows them: a key past its requests or
 * tokens per minute, or its tenant past its budget, gets a 429 in the protocol's own error shape with
 * `retry-after` set to when the window or the budget period frees room; every answer carries the
 * protocol's rate-limit headers; a model outside the allow-lists is the protocol's 404, and
 * `/v1/models` lists only what the key may use. The clock is frozen (core/clock.ts): buckets refill
 * only when the test moves it.
 */
import { waitForGlobalWaitUntil } from "cloudflare:test-internal";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../edge/core/clock.ts";
import { parsePromText, sampleSum } from "../support/prom-text.ts";
import type { FakeWorker } from "./fake-worker.ts";
import { call, messagesBody, OTHER_KEY } from "./helpers.ts";
import { admin, newKey, newTenant, ROOT_TOKEN, wordWorker } from "./tenancy-helpers.ts";

let fake: FakeWorker | undefined;
const realNow = clock.now;
afterEach(() => {
  fake?.restore();
  clock.now = realNow;
});

/** A fixed instant: 10:00:00 UTC on some day. */
const NOW = Date.UTC(2027, 2, 10, 10, 0, 0);

const requests = {
  messages: (key: string, extra: Record<string, unknown> = {}) =>
    call("/v1/messages", { key, method: "POST", body: messagesBody(extra) }),
  responses: (key: string, extra: Record<string, unknown> = {}) =>
    call("/v1/responses", {
      key,
      bearer: true,
      method: "POST",
      body: { model: "frontier-test", input: "hi", store: false, ...extra },
    }),
  chat: (key: string, extra: Record<string, unknown> = {}) =>
    call("/v1/chat/completions", {
      key,
      bearer: true,
      method: "POST",
      body: { model: "frontier-test", messages: [{ role: "user", content: "hi" }], ...extra },
    }),
};

async function errorOf(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

describe("limits at admission", () => {
  it("requests per minute: 429 in each protocol's shape, retry-after to the next request, headers on every answer", async () => {
    clock.now = () => NOW;
    fake = wordWorker();
    const tenant = await newTenant();
    const key = await newKey(tenant, { limits: { requests_per_minute: 2 } });

    const first = await requests.messages(key.value);
    expect(first.status).toBe(200);
    expect(first.headers.get("anthropic-ratelimit-requests-limit")).toBe("2");
    expect(first.headers.get("anthropic-ratelimit-requests-remaining")).toBe("1");
    // Whole again 30 s after one request (a bucket of 2 per minute).
    expect(first.headers.get("anthropic-ratelimit-requests-reset")).toBe(
      new Date(NOW + 30_000).toISOString().replace(".000Z", "Z"),
    );
    const second = await requests.responses(key.value);
    expect(second.status).toBe(200);
    expect(second.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect(second.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    expect(second.headers.get("x-ratelimit-reset-requests")).toBe("1m0s");
    await Promise.all([first.arrayBuffer(), second.arrayBuffer()]);

    const anthropic = await requests.messages(key.value);
    expect(anthropic.status).toBe(429);
    expect(anthropic.headers.get("retry-after")).toBe("30");
    expect(anthropic.headers.get("anthropic-ratelimit-requests-remaining")).toBe("0");
    expect(await errorOf(anthropic)).toMatchObject({
      type: "error",
      error: {
        type: "rate_limit_error",
        message: expect.stringMatching(/This API key has more than 2 requests per minute/),
      },
    });
    for (const refused of [await requests.responses(key.value), await requests.chat(key.value)]) {
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toBe("30");
      expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
      expect(await errorOf(refused)).toMatchObject({
        error: { type: "rate_limit_exceeded", code: "rate_limit_exceeded", param: null },
      });
    }
    // Half a minute later one request fits again.
    clock.now = () => NOW + 30_000;
    expect((await requests.chat(key.value)).status).toBe(200);
    expect((await requests.chat(key.value)).status).toBe(429);
    // The tenant's other keys have their own buckets.
    expect((await requests.messages((await newKey(tenant)).value)).status).toBe(200);
    // Refusals are counted per tenant and reason (a fixed set of reasons: bounded labels).
    const samples = parsePromText(await (await call("/admin/metrics", { key: ROOT_TOKEN, bearer: true })).text());
    expect(sampleSum(samples, "frontier:tenant_limit_refusals_total", { tenant, reason: "requests" })).toBe(4);
    const reasons = samples.filter(
      (s) => s.name === "frontier:tenant_limit_refusals_total" && s.labels.tenant === tenant,
    );
    expect(reasons.map((s) => s.labels.reason).sort()).toEqual([
      "budget",
      "concurrency",
      "key",
      "model",
      "requests",
      "tokens",
    ]);
  });

  it("tokens per minute: a turn reserves its bound (prompt + max_tokens) and settles what it used", async () => {
    clock.now = () => NOW;
    fake = wordWorker({ inputTokens: 900, cachedTokens: 5000, outputTokens: 600 });
    const tenant = await newTenant({ limits: { tokens_per_minute: 2000 } });
    const key = await newKey(tenant);
    const first = await requests.messages(key.value, { max_tokens: 1000 });
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    await waitForGlobalWaitUntil(); // its settlement (after the client has the response) gives back the reservation
    // Cached tokens (reused KV) are not counted: 900 prefilled + 600 output = 1500 of the 2000.
    const second = await requests.messages(key.value, { max_tokens: 1000 });
    expect(second.status).toBe(429);
    expect(second.headers.get("anthropic-ratelimit-tokens-limit")).toBe("2000");
    expect(second.headers.get("anthropic-ratelimit-tokens-remaining")).toBe("500");
    const body = await errorOf(second);
    expect(body).toMatchObject({
      error: { type: "rate_limit_error", message: expect.stringMatching(/2000 tokens per minute/) },
    });
    // It needs its whole bound (~1.5k prompt bound + 1000): the retry-after says when that much is back.
    const retry = Number(second.headers.get("retry-after"));
    clock.now = () => NOW + (retry - 1) * 1000;
    expect((await requests.messages(key.value, { max_tokens: 1000 })).status).toBe(429);
    clock.now = () => NOW + retry * 1000;
    const later = await requests.responses(key.value, { max_output_tokens: 1000 });
    expect(later.status).toBe(200);
    expect(Number(later.headers.get("x-ratelimit-limit-tokens"))).toBe(2000);
  });

  it("a budget: 429 insufficient_quota until the period resets, not retried by SDKs", async () => {
    clock.now = () => NOW;
    fake = wordWorker();
    await admin("/admin/prices", {
      method: "POST",
      body: { prices: [{ model: "frontier-test", input: 10, output: 10 }] },
    });
    // The bound of one small turn: ~0.6k tokens at 10 per million ≈ 0.006, over a 0.001 budget.
    const tenant = await newTenant({ budget: { amount: 0.001, period: "day" } });
    const key = await newKey(tenant);
    const refused = await requests.responses(key.value);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe(String(14 * 3600)); // to 00:00 UTC
    expect(refused.headers.get("x-should-retry")).toBe("false");
    expect(await errorOf(refused)).toMatchObject({
      error: {
        type: "rate_limit_exceeded",
        code: "insufficient_quota",
        message: expect.stringMatching(/0\.001 USD per day/),
      },
    });
    const anthropic = await requests.messages(key.value);
    expect(await errorOf(anthropic)).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    await admin(`/admin/tenants/${tenant}`, { method: "POST", body: { budget: { amount: 1, period: "day" } } });
    expect((await requests.messages(key.value)).status).toBe(200);
    await waitForGlobalWaitUntil();
    // What it cost (3 prefilled + 1 output at 10 per million) is the tenant's spend.
    const samples = parsePromText(await (await call("/admin/metrics", { key: ROOT_TOKEN, bearer: true })).text());
    expect(sampleSum(samples, "frontier:tenant_spend_total", { tenant })).toBeCloseTo(0.00004, 9);
    expect(sampleSum(samples, "frontier:tenant_limit_refusals_total", { tenant, reason: "budget" })).toBe(2);
  });

  it("an API_KEYS tenant's policy is set at run time; its env key keeps working within it", async () => {
    fake = wordWorker();
    expect((await requests.messages(OTHER_KEY)).status).toBe(200);
    await admin("/admin/tenants/other", { method: "POST", body: { models: ["frontier-large"] } });
    const refused = await requests.messages(OTHER_KEY);
    expect(refused.status).toBe(404);
    await admin("/admin/tenants/other", { method: "POST", body: { models: null } });
    expect((await requests.messages(OTHER_KEY)).status).toBe(200);
  });
});

describe("model allow-lists", () => {
  it("answers the protocol's 404 for a model the key may not use, and lists only the allowed ones", async () => {
    fake = wordWorker();
    const tenant = await newTenant({ models: ["frontier-test", "frontier-large"] });
    const open = await newKey(tenant);
    const narrow = await newKey(tenant, { models: ["frontier-large"] });
    const models = async (key: string) =>
      ((await (await call("/v1/models", { key, bearer: true })).json()) as { data: { id: string }[] }).data.map(
        (m) => m.id,
      );
    expect(await models(open.value)).toEqual(["frontier-test"]);
    expect(await models(narrow.value)).toEqual([]);
    expect((await call("/v1/models/frontier-test", { key: narrow.value, bearer: true })).status).toBe(404);

    const anthropic = await requests.messages(narrow.value);
    expect(anthropic.status).toBe(404);
    expect(await errorOf(anthropic)).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    for (const refused of [await requests.responses(narrow.value), await requests.chat(narrow.value)]) {
      expect(refused.status).toBe(404);
      expect(await errorOf(refused)).toMatchObject({ error: { code: "model_not_found", param: "model" } });
    }
    const tenantWide = await requests.messages(open.value, { model: "somewhere-else" });
    expect(tenantWide.status).toBe(404);
    expect((await requests.messages(open.value)).status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });
});
