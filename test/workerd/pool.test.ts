/**
 * The worker pool inside workerd: registration and heartbeats (authenticated), down detection,
 * placement by prefix then load, failover before the first byte (unreachable or draining worker)
 * with an epoch bump, the SSE error of a stream cut mid-way, and drain through the admin API.
 */
import { env } from "cloudflare:workers";
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it, vi } from "vitest";
import { parsePatterns } from "../../edge/config/registration.ts";
import type { PoolDO } from "../../edge/pool/pool-do.ts";
import {
  CacheDecision,
  StopReason,
  WorkerErrorCode,
  type WorkerReport,
  WorkerReportSchema,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { prefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { SseDecoder } from "../support/sse-decoder.ts";
import { event, type FakeWorker, installFakeWorker, WORKER_URL } from "./fake-worker.ts";
import { call, type ErrorBody, idleWorkerReport, messagesBody } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
const POOL_TOKEN = "frontier-dev-pool-token-change-me";
const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
let fake: FakeWorker | undefined;
const registered = new Set<string>();
afterEach(async () => {
  fake?.restore();
  // Each test's workers leave the pool, so the next test places only on its own fakes.
  for (const url of registered) await heartbeat(report(url, { leaving: true }));
  registered.clear();
});

function report(url: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return idleWorkerReport({ id: `w-${url.split(":")[1]?.slice(2)}`, url, ...extra });
}

function heartbeat(body: Record<string, unknown>, token: string | null = POOL_TOKEN): Promise<Response> {
  if (typeof body.url === "string") registered.add(body.url);
  return call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    body,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });
}

async function register(...urls: string[]): Promise<void> {
  for (const url of urls) expect((await heartbeat(report(url))).status).toBe(200);
}

/** A worker that answers every turn with one tool call minted for the request's session. */
function toolTurns(options: Parameters<typeof installFakeWorker>[1] = {}, script?: (url: string) => boolean) {
  return installFakeWorker(async function* ({ request, url }) {
    if (script && !script(url)) {
      yield event({ case: "error", value: { code: WorkerErrorCode.DRAINING, message: "draining", param: "" } });
      return;
    }
    const id = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
    const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
    yield event({
      case: "prompt",
      value: { promptTokens: 9, cachedTokens: 0, decision: CacheDecision.COLD, messageId },
    });
    yield event({ case: "toolCallStart", value: { index: 0, id, name: "lookup" } });
    yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: "{}" } });
    yield event({ case: "toolCallEnd", value: { index: 0 } });
    yield event({ case: "stop", value: { reason: StopReason.TOOL_USE, usage: { outputTokens: 3 } } });
  }, options);
}

async function firstTurn(system: string): Promise<{ id: string; route: string }> {
  const response = await call("/v1/messages", { method: "POST", body: messagesBody({ system }) });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { content: { type: string; id?: string }[] };
  return { id: body.content[0]?.id ?? "", route: response.headers.get("x-frontier-route") ?? "" };
}

const toolResult = (id: string, extra: Record<string, unknown> = {}) =>
  messagesBody({
    messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] }],
    ...extra,
  });

describe("pool membership", () => {
  it("requires the pool token and a well-formed report", async () => {
    const url = "http://10.0.1.1:1";
    for (const token of [null, "wrong-token"]) {
      const response = await heartbeat(report(url), token);
      expect(response.status).toBe(401);
      expect(((await response.json()) as ErrorBody).error.type).toBe("authentication_error");
    }
    const bad = await heartbeat(report(url, { sequences_total: -1 }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as ErrorBody).error.message).toContain("sequences_total");
    const unknown = await heartbeat(report(url, { region: "mars" }));
    expect(unknown.status).toBe(400);
    const ok = await heartbeat(report(url));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ state: "up" });
  });

  it("lists workers only for the admin token", async () => {
    await register("http://10.0.1.2:1");
    expect((await call("/admin/workers", { key: null })).status).toBe(401);
    expect((await call("/admin/workers", { key: POOL_TOKEN, bearer: true })).status).toBe(401);
    const response = await call("/admin/workers", { key: ADMIN_TOKEN, bearer: true });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { regions: { name: string; workers: { url: string; state: string }[] }[] };
    const urls = body.regions[0]?.workers.map((w) => w.url);
    expect(urls).toContain(WORKER_URL);
    expect(urls).toContain("http://10.0.1.2:1");
  });

  it("marks a worker down when it misses heartbeats or leaves", async () => {
    const pool = env.POOLS.getByName("pool:unit");
    const args = { region: "unit", staticUrls: [], timeoutMs: 60_000 };
    await beat(pool, parseReport("http://10.0.2.1:1"));
    await beat(pool, parseReport("http://10.0.2.2:1"));
    expect((await pool.view(args)).map((w) => w.state)).toEqual(["up", "up"]);
    await new Promise((r) => setTimeout(r, 5));
    expect((await pool.view({ ...args, timeoutMs: 1 })).map((w) => w.state)).toEqual(["down", "down"]);
    await beat(pool, { ...parseReport("http://10.0.2.2:1"), leaving: true });
    expect((await pool.view(args)).map((w) => w.state)).toEqual(["up", "down"]);
  });
});

describe("placement", () => {
  it("prefers the worker holding the prefix checkpoint, then the least loaded", async () => {
    const [a, b] = ["http://10.0.3.1:1", "http://10.0.3.2:1"];
    fake = toolTurns({ urls: [WORKER_URL, a, b] });
    const prefix = await prefixFingerprint("local", { system: ["Shared system prompt"], tools: [] });
    // b holds the prefix but already serves more sessions than a.
    await heartbeat(report(a));
    await heartbeat(report(b, { prefixes: [prefix], resident_sessions: 2 }));
    for (let i = 0; i < 2; i++) {
      const { route } = await firstTurn("Shared system prompt");
      expect(route).toContain("placement=prefix");
      expect(fake.urls.at(-1)).toBe(b);
    }
    const other = await firstTurn("Another system prompt");
    expect(other.route).toContain("placement=load");
    const stats = await env.POOLS.getByName("pool:local").stats();
    expect(stats.prefixHits).toBeGreaterThanOrEqual(2);
  });

  it("advertises a placed session's prefix for its worker before that worker's next heartbeat", async () => {
    const pool = env.POOLS.getByName("pool:lag");
    const args = { region: "lag", staticUrls: [], timeoutMs: 60_000 };
    const [a, b] = ["http://10.0.9.1:1", "http://10.0.9.2:1"];
    await beat(pool, parseReport(a));
    await beat(pool, parseReport(b));
    const prefix = await prefixFingerprint("local", { system: ["A new agent"], tools: [] });
    const first = await pool.place({ ...args, prefix });
    expect(first).toMatchObject({ reason: "load", prefixKnown: false });
    // Without a heartbeat in between, the next session with that prefix finds the first one's worker.
    const second = await pool.place({ ...args, prefix });
    expect(second).toMatchObject({ reason: "prefix", prefixKnown: true, worker: { url: first?.worker.url } });
    // The worker's own report replaces the pool's guess.
    await beat(pool, parseReport(first?.worker.url ?? ""));
    const view = await pool.view(args);
    expect(view.find((w) => w.url === first?.worker.url)?.prefixes).toEqual([]);
  });

  it("takes turns among equally loaded workers, a heartbeat between placements notwithstanding", async () => {
    const pool = env.POOLS.getByName("pool:turns");
    const args = { region: "unit", staticUrls: [], timeoutMs: 60_000 };
    const urls = ["http://10.0.10.1:1", "http://10.0.10.2:1", "http://10.0.10.3:1"];
    const full = (url: string) => ({ ...parseReport(url), sequencesFree: 0, residentSessions: 4 });
    const chosen: (string | undefined)[] = [];
    for (let i = 0; i < 6; i++) {
      for (const url of urls) await beat(pool, full(url));
      chosen.push((await pool.place(args))?.worker.url);
    }
    expect(chosen).toEqual([...urls, ...urls]);
  });
});

describe("failover", () => {
  it("moves a session whose worker is unreachable before the first byte, bumping the epoch", async () => {
    const [a, b] = ["http://10.0.4.1:1", "http://10.0.4.2:1"];
    const unreachable = new Set<string>();
    fake = toolTurns({ urls: [WORKER_URL, a, b], unreachable });
    await register(a, b);
    const { id } = await firstTurn("failover");
    const owner = fake.urls.at(-1) ?? "";
    const session = fake.requests.at(-1)?.sessionId ?? "";
    // The first turn is recorded just after its response (serve-turn.ts, rc.sent.after): let it land.
    await vi.waitFor(async () => {
      expect(await env.SESSIONS.getByName(session).get("local")).toMatchObject({ epoch: 1, turns: 1, busy: false });
    });
    unreachable.add(owner);
    const response = await call("/v1/messages", { method: "POST", body: toolResult(id) });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-route")).toContain("epoch=2; failover");
    expect(fake.urls.at(-1)).not.toBe(owner);
    expect(fake.requests.at(-1)?.sessionId).toBe(session);
    expect(fake.requests.at(-1)?.epoch).toBe(2n);
    // The turn is recorded just after the response (serve-turn.ts, rc.sent.after).
    const info = await vi.waitFor(async () => {
      const now = await env.SESSIONS.getByName(session).get("local");
      expect(now).toMatchObject({ epoch: 2, turns: 2, busy: false });
      return now;
    });
    expect(info?.workerUrl).not.toBe(owner);
    const view = await env.POOLS.getByName("pool:local").view({ region: "local", staticUrls: [], timeoutMs: 60_000 });
    expect(view.find((w) => w.url === owner)?.state).toBe("down");
  });

  it("moves a session whose worker is draining", async () => {
    const [a, b] = ["http://10.0.5.1:1", "http://10.0.5.2:1"];
    const draining = new Set<string>();
    fake = toolTurns({ urls: [WORKER_URL, a, b] }, (url) => !draining.has(url));
    await register(a, b);
    const { id } = await firstTurn("drain-me");
    const owner = fake.urls.at(-1) ?? "";
    draining.add(owner);
    const response = await call("/v1/messages", { method: "POST", body: toolResult(id, { stream: true }) });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-route")).toContain("epoch=2; failover");
    expect(fake.urls.at(-1)).not.toBe(owner);
    await response.arrayBuffer();
  });

  it("ends a stream cut by a dying worker with an api_error event (the request may have killed it)", async () => {
    fake = installFakeWorker(async function* ({ request }) {
      const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
      yield event({
        case: "prompt",
        value: { promptTokens: 9, cachedTokens: 0, decision: CacheDecision.COLD, messageId },
      });
      yield event({ case: "textDelta", value: { text: "partial" } });
      throw new Error("worker died");
    });
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
    expect(response.status).toBe(200);
    const decoder = new SseDecoder();
    const events = [...decoder.push(new Uint8Array(await response.arrayBuffer())), ...decoder.end()];
    const last = events.at(-1);
    expect(last?.event).toBe("error");
    expect(JSON.parse(last?.data ?? "{}")).toMatchObject({ type: "error", error: { type: "api_error" } });
  });
});

describe("drain", () => {
  it("hands every session over and reports the worker empty", async () => {
    const [a, b] = ["http://10.0.6.1:1", "http://10.0.6.2:1"];
    const sessions: string[] = [];
    fake = toolTurns({
      urls: [WORKER_URL, a, b],
      drain: (url) => ({
        sessions: url === a ? sessions.map((sessionId) => ({ tenantId: "local", sessionId, checkpointed: true })) : [],
        residentSessions: 0,
      }),
    });
    await register(a, b);
    for (let i = 0; i < 4; i++) {
      await firstTurn(`drain ${i}`);
      if (fake.urls.at(-1) === a) sessions.push(fake.requests.at(-1)?.sessionId ?? "");
    }
    expect(sessions.length).toBeGreaterThan(0);
    const denied = await call(`/admin/workers/${encodeURIComponent(a)}/drain`, { method: "POST", key: null });
    expect(denied.status).toBe(401);
    const response = await call(`/admin/workers/${encodeURIComponent(a)}/drain`, {
      method: "POST",
      key: ADMIN_TOKEN,
      bearer: true,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      state: "drained",
      handed_over: sessions.length,
      checkpointed: sessions.length,
      moved: sessions.length,
      resident_sessions: 0,
    });
    for (const session of sessions) {
      const info = await env.SESSIONS.getByName(session).get("local");
      expect(info?.epoch).toBe(2);
      expect(info?.workerUrl).not.toBe(a);
    }
    for (let i = 0; i < 3; i++) {
      await firstTurn(`after drain ${i}`);
      expect(fake.urls.at(-1)).not.toBe(a);
    }
    expect((await call("/admin/workers/nope/drain", { method: "POST", key: ADMIN_TOKEN, bearer: true })).status).toBe(
      404,
    );
  });
});

/** A heartbeat straight to a PoolDO, with a development credential for the report's id (any allowed URL). */
function beat(pool: DurableObjectStub<PoolDO>, report: WorkerReport) {
  const binding = { id: report.id, url: undefined, capacity: 64, region: undefined, source: "dev" as const };
  return pool.register({
    region: report.region,
    staticUrls: [],
    timeoutMs: 60_000,
    report,
    auth: { binding },
    allowList: parsePatterns("10.0.0.0/8"),
  });
}

function parseReport(url: string) {
  return create(WorkerReportSchema, {
    id: url,
    region: "unit",
    url,
    boot: "b",
    modelIdentity: "m",
    sequencesTotal: 4,
    sequencesFree: 4,
    queueDepth: 0,
    activeRequests: 0,
    residentSessions: 0,
    prefixes: [],
    draining: false,
    leaving: false,
  });
}
