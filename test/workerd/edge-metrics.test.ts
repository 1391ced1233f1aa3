/**
 * The edge's /admin/metrics: admin token only; request, turn and token counters move by what the
 * requests did (aggregated in the EdgeMetricsDO after each response), pool gauges and per-tenant
 * usage are exported in Prometheus text.
 */

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { SOFT_STATE_WRITE_MS } from "../../edge/core/write-behind.ts";
import { EdgeMetricsDO } from "../../edge/metrics/edge-metrics-do.ts";
import { observation } from "../../edge/metrics/histogram.ts";
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
    expectCumulative(after, "frontier:edge_request_duration_seconds", { route: "/v1/messages" });
    expectCumulative(after, "frontier:edge_turn_duration_seconds", { protocol: "anthropic" });
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

/** A histogram series as Prometheus reads it: every bucket in increasing `le`, non-decreasing, `+Inf` = `_count`. */
function expectCumulative(samples: Sample[], family: string, labels: Record<string, string>) {
  const mine = (s: Sample) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  const buckets = samples.filter((s) => s.name === `${family}_bucket` && mine(s));
  const bounds = buckets.map((b) => (b.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(b.labels.le)));
  expect(bounds.length).toBeGreaterThan(2);
  expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
  for (const [i, b] of buckets.entries()) expect(b.value).toBeGreaterThanOrEqual(buckets[i - 1]?.value ?? 0);
  expect(buckets.at(-1)?.labels.le).toBe("+Inf");
  expect(buckets.at(-1)?.value).toBe(sampleSum(samples, `${family}_count`, labels));
}

describe("edge metrics timing and storage", () => {
  it("counts a streamed request once its stream has ended, not at its headers", async () => {
    let finish: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const secret = env.ID_SECRET ?? "";
    fake = installFakeWorker(async function* ({ request }) {
      const messageId = await mintId(secret, "msg", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 5, decision: CacheDecision.COLD, messageId } });
      yield event({ case: "textDelta", value: { text: "hi" } });
      await held;
      yield event({
        case: "stop",
        value: { reason: StopReason.END_TURN, usage: { inputTokens: 5, cachedTokens: 0, outputTokens: 1 } },
      });
    });
    const route = { route: "/v1/messages", method: "POST", status: "200" };
    const before = await scrape();
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    expect(response.status).toBe(200);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // the stream has started: headers and its first events are out
    await new Promise((r) => setTimeout(r, 100));
    expect(delta(before, await scrape(), "frontier:edge_requests_total", route)).toBe(0);
    finish();
    while (!(await reader.read()).done) {}
    const after = await scrapeUntil((s) => delta(before, s, "frontier:edge_requests_total", route) >= 1);
    expect(delta(before, after, "frontier:edge_requests_total", route)).toBe(1);
  });

  it("moves an older edge's cumulative buckets to per-bucket hits once, with the same totals", async () => {
    const stub = env.METRICS.getByName("migration-test");
    const family = "frontier:edge_request_duration_seconds";
    const cumulative = [
      ["0.005", 1],
      ["0.01", 1],
      ["0.025", 3],
      ["+Inf", 4],
    ] as const;
    await runInDurableObject(stub, (_instance, state) => {
      for (const [le, value] of cumulative) {
        state.storage.sql.exec(
          "INSERT INTO counters VALUES (?, ?, ?)",
          `${family}_bucket`,
          JSON.stringify({ le, route: "/v1/messages" }),
          value,
        );
      }
    });
    // An edge of this version starting on that storage (a new instance of the object).
    const samples = await runInDurableObject(stub, (_instance, state) =>
      new EdgeMetricsDO(state, env as never).samples(),
    );
    const at = (le: string) => samples.find((s) => s.name === `${family}_bucket` && s.labels.le === le)?.value;
    expect([at("0.005"), at("0.01"), at("0.025"), at("0.05"), at("600"), at("+Inf")]).toEqual([1, 1, 3, 3, 3, 4]);
    const left = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT count(*) AS n FROM counters WHERE name LIKE '%bucket'").one(),
    );
    expect(left.n).toBe(0);
    await stub.add(observation(family, { route: "/v1/messages" }, 0.02));
    const added = await stub.samples();
    expect(added.find((s) => s.name === `${family}_bucket` && s.labels.le === "0.025")?.value).toBe(4);
    expect(added.find((s) => s.name === `${family}_bucket` && s.labels.le === "+Inf")?.value).toBe(5);
  });

  it("adds increments up in memory, writes them in one transaction after the delay, and shows them to a read at once", async () => {
    const stub = env.METRICS.getByName(`write-behind-${crypto.randomUUID()}`);
    const name = "frontier:edge_requests_total";
    const labels = { route: "/v1/messages", method: "POST", status: "200" };
    const stored = () =>
      runInDurableObject(
        stub,
        (_instance, state) =>
          state.storage.sql.exec<{ value: number }>("SELECT value FROM counters WHERE name = ?", name).toArray()[0]
            ?.value,
      );
    const turn = { at: 1, protocol: "anthropic", session: "s", decision: "cold", miss: "none", cached: 0, prompt: 1 };
    for (let i = 0; i < 3; i++) {
      await stub.add([{ name, labels, value: 1 }], { ...turn, placement: "none", failover: false, at: i });
    }
    expect(await stored()).toBeUndefined();
    await new Promise((r) => setTimeout(r, SOFT_STATE_WRITE_MS + 100));
    expect(await stored()).toBe(3);
    // A read writes what is pending first: nothing a scrape asks for is missing.
    await stub.add([{ name, labels, value: 2 }]);
    expect((await stub.samples()).find((s) => s.name === name)?.value).toBe(5);
    expect(await stored()).toBe(5);
    expect((await stub.recentTurns()).map((t) => t.at)).toEqual([2, 1, 0]);
  });
});
