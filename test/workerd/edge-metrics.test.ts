/**
 * The edge's /admin/metrics: admin token only; request, turn and token counters move by what the
 * requests did (aggregated in the EdgeMetricsDO after each response), pool gauges and per-tenant
 * usage are exported in Prometheus text.
 */

import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { delta, parsePromText, type Sample, sampleSum } from "../support/prom-text.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, LOCAL_KEY, messagesBody } from "./helpers.ts";

const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

async function scrape(): Promise<Sample[]> {
  const response = await call("/admin/metrics", { key: ADMIN_TOKEN, bearer: true });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parsePromText(await response.text());
}

/** Counters arrive after the response (waitUntil): scrape until `ready` holds. */
async function scrapeUntil(ready: (samples: Sample[]) => boolean): Promise<Sample[]> {
  for (let i = 0; i < 100; i++) {
    const samples = await scrape();
    if (ready(samples)) return samples;
    await new Promise((r) => setTimeout(r, 20));
  }
  return scrape();
}

describe("admin surfaces", () => {
  it("refuse every caller without the admin token, and take it as Bearer or as the Basic password", async () => {
    const basic = (password: string) => `Basic ${btoa(`admin:${password}`)}`;
    for (const path of ["/admin/metrics", "/admin/status", "/admin/status.json", "/admin/usage", "/admin/workers"]) {
      const none = await call(path, { key: null });
      expect(none.status, path).toBe(401);
      expect(none.headers.get("www-authenticate"), path).toContain("Basic");
      expect((await call(path, { key: LOCAL_KEY, bearer: true })).status, path).toBe(401);
      expect((await call(path, { key: null, headers: { authorization: basic("wrong") } })).status, path).toBe(401);
      expect((await call(path, { key: ADMIN_TOKEN, bearer: true })).status, path).toBe(200);
      expect((await call(path, { key: null, headers: { authorization: basic(ADMIN_TOKEN) } })).status, path).toBe(200);
    }
    expect((await call("/admin/workers/x/drain", { method: "POST", key: null })).status).toBe(401);
    const page = await call("/admin/status", { key: ADMIN_TOKEN, bearer: true });
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
  });
});

describe("edge /admin/metrics", () => {
  it("counts requests by route and status, and turns by decision with their tokens", async () => {
    const secret = env.ID_SECRET ?? "";
    fake = installFakeWorker(async function* ({ request }) {
      const messageId = await mintId(secret, "msg", request.tenantId, request.sessionId);
      yield event({
        case: "prompt",
        value: { promptTokens: 30, cachedTokens: 12, decision: CacheDecision.CHECKPOINT, messageId },
      });
      yield event({ case: "textDelta", value: { text: "hi" } });
      yield event({
        case: "stop",
        value: { reason: StopReason.END_TURN, usage: { inputTokens: 18, cachedTokens: 12, outputTokens: 2 } },
      });
    });
    const messages = { route: "/v1/messages", method: "POST", status: "200" };
    const missing = { route: "other", method: "GET", status: "404" };
    const before = await scrape();
    expect((await call("/v1/messages", { method: "POST", body: messagesBody() })).status).toBe(200);
    expect((await call("/no/such/path/123")).status).toBe(404);
    const after = await scrapeUntil(
      (s) =>
        delta(before, s, "frontier:edge_requests_total", messages) >= 1 &&
        delta(before, s, "frontier:edge_turns_total") >= 1 &&
        delta(before, s, "frontier:edge_requests_total", missing) >= 1,
    );
    expect(delta(before, after, "frontier:edge_requests_total", messages)).toBe(1);
    expect(delta(before, after, "frontier:edge_requests_total", missing)).toBe(1);
    expect(delta(before, after, "frontier:edge_request_duration_seconds_count", { route: "/v1/messages" })).toBe(1);
    const turn = { protocol: "anthropic", decision: "checkpoint", miss_reason: "none" };
    expect(delta(before, after, "frontier:edge_turns_total", turn)).toBe(1);
    expect(delta(before, after, "frontier:edge_prompt_tokens_total", { protocol: "anthropic" })).toBe(30);
    expect(delta(before, after, "frontier:edge_cached_tokens_total", { protocol: "anthropic" })).toBe(12);
    expect(delta(before, after, "frontier:edge_turn_duration_seconds_count", { protocol: "anthropic" })).toBe(1);
    // No path values in labels: an unknown path is "other".
    expect(after.some((s) => s.labels.route?.includes("123"))).toBe(false);
    // Gauges of the pool and the tenants' usage are exported too.
    expect(sampleSum(after, "frontier:pool_workers", { region: "local", state: "up" })).toBeGreaterThanOrEqual(1);
    const billed = await scrapeUntil((s) => sampleSum(s, "frontier:tenant_turns_total", { tenant: "local" }) >= 1);
    expect(
      sampleSum(billed, "frontier:tenant_tokens_total", { tenant: "local", kind: "output" }),
    ).toBeGreaterThanOrEqual(2);
  });
});
