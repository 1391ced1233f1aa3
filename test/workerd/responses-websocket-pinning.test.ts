/**
 * A Responses WebSocket lane is pinned to its session's route (edge/protocols/responses/socket/socket-pins.ts):
 * once a lane's turn is recorded, its follow-ups (`previous_response_id` of its last response, only
 * the new input, `store: false`) reach the session's worker with no SessionDO and no ResponseStoreDO
 * call before the worker call — also after a burst of other sessions evicted the isolate's route
 * cache, which a lane without a pin then pays for with a SessionDO.open, and also when the client
 * sends the next turn the moment the last one completes (the lane waits for the record). A stale pin (the session
 * moved: the worker answers STALE_EPOCH; the worker is gone; it was drained) falls back to the
 * SessionDO, the turn still succeeds, and the lane is pinned to the new route.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../edge/config/config.ts";
import type { Env } from "../../edge/env.ts";
import edge from "../../edge/index.ts";
import { invalidatePoolView } from "../../edge/pool/pool-client.ts";
import { MAX_ROUTES, routeCache } from "../../edge/session/route-cache.ts";
import { CacheDecision, StopReason, WorkerErrorCode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, type FakeWorkerOptions, installFakeWorker, WORKER_URL } from "./fake-worker.ts";
import { call, idleWorkerReport, LOCAL_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
const POOL_TOKEN = "frontier-dev-pool-token-change-me";
let fake: FakeWorker | undefined;
const registered: string[] = [];
afterEach(async () => {
  fake?.restore();
  for (const url of registered.splice(0)) await heartbeat(url, { leaving: true });
});

/** Every Durable Object call the edge makes (`SESSIONS.open`, …), and `generate` when the worker is called. */
function loggingEnv(steps: string[]): Env {
  return new Proxy(env, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (typeof prop !== "string" || !isNamespace(value)) return value;
      return {
        getByName: (name: string, options?: Parameters<DurableObjectNamespace["getByName"]>[1]) => {
          const stub = value.getByName(name, options) as unknown as Record<string, (...a: unknown[]) => unknown>;
          return new Proxy(stub, {
            get(s, method) {
              if (typeof method !== "string" || method === "then") return s[method as string];
              return (...args: unknown[]) => {
                steps.push(`${prop}.${method}`);
                return s[method]?.(...args);
              };
            },
          });
        },
      };
    },
  });
}

function isNamespace(value: unknown): value is DurableObjectNamespace {
  return typeof value === "object" && value !== null && typeof Reflect.get(value, "getByName") === "function";
}

/**
 * A worker that answers every turn in text, or refuses an epoch `stale` names; `options` as for
 * installFakeWorker (the worker URLs it answers on, those that are unreachable).
 */
function textWorker(steps: string[], stale: (epoch: number) => boolean = () => false, options: FakeWorkerOptions = {}) {
  return installFakeWorker(async function* ({ request }) {
    steps.push("generate");
    if (stale(Number(request.epoch))) {
      yield event({ case: "error", value: { code: WorkerErrorCode.STALE_EPOCH, message: "stale", param: "epoch" } });
      return;
    }
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: 30, messageId, decision: CacheDecision.COLD } });
    yield event({ case: "textDelta", value: { text: "ok" } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage: { inputTokens: 30, outputTokens: 1 } } });
  }, options);
}

/** Two more workers in the pool (heartbeats), removed again after the test. */
async function registerWorkers(urls: string[]): Promise<void> {
  for (const url of urls) {
    expect((await heartbeat(url)).status).toBe(200);
    registered.push(url);
  }
}

interface ServerEvent {
  type: string;
  stream_id?: string;
  status?: number;
  response?: { id: string; status: string };
}

/** A socket opened through the edge on `steps`' logging env. */
async function openSocket(steps: string[]) {
  const ctx = createExecutionContext();
  const upgrade = new Request("http://edge.test/v1/responses", {
    headers: { upgrade: "websocket", authorization: `Bearer ${LOCAL_KEY}` },
  });
  const response = await edge.fetch(upgrade as Parameters<typeof edge.fetch>[0], loggingEnv(steps), ctx);
  expect(response.status).toBe(101);
  const socket = response.webSocket;
  if (!socket) throw new Error("no webSocket on the 101");
  socket.accept();
  const events: ServerEvent[] = [];
  socket.addEventListener("message", (m) => {
    events.push(JSON.parse(m.data as string) as ServerEvent);
  });
  const terminal = (e: ServerEvent) => e.type === "response.completed" || e.type === "error";
  /** One turn on `lane`: its terminal event. */
  const turn = async (lane: string, body: Record<string, unknown>): Promise<ServerEvent> => {
    const seen = events.filter(terminal).length;
    socket.send(
      JSON.stringify({ type: "response.create", model: "frontier-test", store: false, stream_id: lane, ...body }),
    );
    await vi.waitFor(() => expect(events.filter(terminal).length).toBeGreaterThan(seen), { timeout: 10_000 });
    return events.filter(terminal)[seen] as ServerEvent;
  };
  /**
   * `count` turns on `lane`, each sent the moment the previous one's `response.completed` arrives
   * (a client whose tool answers at once). Resolves with their terminal events.
   */
  const chain = async (lane: string, count: number): Promise<ServerEvent[]> => {
    const done: ServerEvent[] = [];
    const send = (extra: Record<string, unknown>) =>
      socket.send(
        JSON.stringify({ type: "response.create", model: "frontier-test", store: false, stream_id: lane, ...extra }),
      );
    socket.addEventListener("message", (m) => {
      const e = JSON.parse(m.data as string) as ServerEvent;
      if (e.stream_id !== lane || !terminal(e)) return;
      done.push(e);
      if (e.type === "response.completed" && done.length < count)
        send({ previous_response_id: e.response?.id, input: `turn ${done.length + 1}` });
    });
    send({ input: "turn 1" });
    await vi.waitFor(() => expect(done.length).toBe(count), { timeout: 10_000 });
    return done;
  };
  const close = async () => {
    socket.close();
    await waitOnExecutionContext(ctx);
  };
  return { turn, chain, close };
}

/** The turn's record landed (serve-turn.ts records just after the response): the route is confirmed. */
async function recorded(sessionId: string, turns: number): Promise<void> {
  await vi.waitFor(async () =>
    expect(await env.SESSIONS.getByName(sessionId).get("local")).toMatchObject({ turns, busy: false }),
  );
}

/** Other sessions' turns fill the isolate's route cache: its oldest routes, this one's among them, go. */
function burstOfOtherSessions(): void {
  for (let i = 0; i < MAX_ROUTES; i++)
    routeCache.remember("local", `burst-${i}`, {
      workerUrl: WORKER_URL,
      epoch: 1,
      prefix: undefined,
      pendingToolUseIds: 0,
      at: Date.now(),
    });
}

/** Whether the isolate's cache lost the route the worker was last called on (a hit would take it out). */
function evicted(worker: FakeWorker): boolean {
  const last = worker.requests.at(-1);
  const lookup = { tenant: "local", sessionId: last?.sessionId ?? "", hinted: false, firstTurn: false };
  const routable = worker.urls.slice(-1);
  return routeCache.take({ ...lookup, prefix: last?.prefixFingerprint, routable, now: Date.now() }) === undefined;
}

/** The Durable Object calls of one turn before its (first) worker call: route lookups, if any. */
function lookupsBeforeWorker(steps: string[]): string[] {
  const before = steps.slice(0, steps.indexOf("generate"));
  expect(before.length).toBeLessThan(steps.length); // the worker was called
  // The tenant's limiter (admission) and the isolate-wide pool view are not lookups of the session.
  return before.filter((s) => !s.startsWith("TENANTS.") && !s.startsWith("POOLS."));
}

/** Workers whose connections fail; a call to one is logged as the worker call it was. */
class GoneWorkers extends Set<string> {
  constructor(private readonly steps: string[]) {
    super();
  }

  override has(url: string): boolean {
    const gone = super.has(url);
    if (gone) this.steps.push("generate");
    return gone;
  }
}

function heartbeat(url: string, extra: Record<string, unknown> = {}): Promise<Response> {
  const body = idleWorkerReport({ id: `w-pin-${url.split(".").at(-1)?.split(":")[0]}`, url, ...extra });
  return call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    body,
    headers: { authorization: `Bearer ${POOL_TOKEN}` },
  });
}

describe("a Responses WebSocket lane pinned to its session's route", () => {
  it("sends turns 2..N to the worker with no SessionDO or ResponseStoreDO call, after other sessions evicted the route cache", async () => {
    const steps: string[] = [];
    fake = textWorker(steps);
    const ws = await openSocket(steps);
    let last = await ws.turn("main", { input: "turn 1" });
    expect(last.response?.status).toBe("completed");
    const sessionId = fake.requests[0]?.sessionId ?? "";
    for (let n = 2; n <= 4; n++) {
      await recorded(sessionId, n - 1);
      burstOfOtherSessions();
      expect(evicted(fake)).toBe(true);
      steps.length = 0;
      last = await ws.turn("main", { previous_response_id: last.response?.id, input: `turn ${n}` });
      expect(last).toMatchObject({ type: "response.completed", stream_id: "main" });
      expect(lookupsBeforeWorker(steps), `turn ${n}: ${steps.join(" ")}`).toEqual([]);
      expect(fake.requests.at(-1)).toMatchObject({ sessionId, epoch: 1n });
    }

    // A lane without a pin of its own continuing the same session (a fork of main's last response)
    // pays the lookup the pin saves: the isolate's cache no longer has the route.
    await recorded(sessionId, 4);
    burstOfOtherSessions();
    steps.length = 0;
    const fork = await ws.turn("fork", { previous_response_id: last.response?.id, input: "a fork" });
    expect(fork.type).toBe("response.completed");
    expect(lookupsBeforeWorker(steps)).toEqual(["SESSIONS.open"]);
    expect(fake.requests.at(-1)?.sessionId).toBe(sessionId);
    await recorded(sessionId, 5);
    await ws.close();
  });

  it("pins the lane before its next turn however fast the client answers: no lookup, the record first", async () => {
    const steps: string[] = [];
    fake = textWorker(steps);
    const ws = await openSocket(steps);
    const done = await ws.chain("fast", 4);
    expect(done.map((e) => e.type)).toEqual(Array(4).fill("response.completed"));
    const sessionId = fake.requests[0]?.sessionId ?? "";
    expect(fake.requests.map((r) => r.sessionId)).toEqual(Array(4).fill(sessionId));
    // The steps between one worker call and the next: the previous turn's record, then no lookup.
    const between = steps.join(" ").split("generate").slice(1, -1);
    expect(between).toHaveLength(3);
    for (const segment of between) {
      const calls = segment.trim().split(" ");
      expect(calls, segment).toContain("SESSIONS.recordTurn");
      const lookups = calls.filter((c) => c.startsWith("RESPONSES.") || /^SESSIONS\.(open|hold|get)$/.test(c));
      expect(lookups, segment).toEqual([]);
    }
    await recorded(sessionId, 4);
    await ws.close();
  });

  it("falls back through the SessionDO when the pinned epoch is stale, serves the turn and re-pins", async () => {
    const steps: string[] = [];
    fake = textWorker(steps);
    const ws = await openSocket(steps);
    const first = await ws.turn("main", { input: "turn 1" });
    const sessionId = fake.requests[0]?.sessionId ?? "";
    await recorded(sessionId, 1);
    // The session moves (a drain's hand-over from another isolate): epoch 2; the lane still holds epoch 1.
    const moved = await env.SESSIONS.getByName(sessionId).handOver({
      tenant: "local",
      fromUrl: WORKER_URL,
      workerUrl: WORKER_URL,
    });
    expect(moved).toBe(2);
    burstOfOtherSessions();
    fake.restore();
    fake = textWorker(steps, (epoch) => epoch < 2);
    steps.length = 0;
    const second = await ws.turn("main", { previous_response_id: first.response?.id, input: "turn 2" });
    expect(second.type).toBe("response.completed");
    expect(fake.requests.map((r) => Number(r.epoch))).toEqual([1, 2]);
    // The pinned attempt went straight to the worker; its STALE_EPOCH sent the turn through the DO.
    expect(steps.filter((s) => s === "generate" || s.startsWith("SESSIONS.")).slice(0, 4)).toEqual([
      "generate",
      "SESSIONS.release",
      "SESSIONS.open",
      "generate",
    ]);
    await recorded(sessionId, 2);

    // Re-pinned at epoch 2: the next turn goes straight to the worker again.
    burstOfOtherSessions();
    steps.length = 0;
    const third = await ws.turn("main", { previous_response_id: second.response?.id, input: "turn 3" });
    expect(third.type).toBe("response.completed");
    expect(lookupsBeforeWorker(steps)).toEqual([]);
    expect(fake.requests.at(-1)).toMatchObject({ sessionId, epoch: 2n });
    await recorded(sessionId, 3);
    await ws.close();
  });

  it("moves a lane whose pinned worker is gone to another worker, serves the turn and re-pins there", async () => {
    const workers = ["http://10.0.9.1:1", "http://10.0.9.2:1"];
    await registerWorkers(workers);
    const steps: string[] = [];
    const unreachable = new GoneWorkers(steps);
    fake = textWorker(steps, undefined, { urls: [WORKER_URL, ...workers], unreachable });
    const ws = await openSocket(steps);
    const first = await ws.turn("main", { input: "turn 1" });
    const sessionId = fake.requests[0]?.sessionId ?? "";
    const owner = fake.urls[0] ?? "";
    await recorded(sessionId, 1);
    unreachable.add(owner);
    steps.length = 0;
    const second = await ws.turn("main", { previous_response_id: first.response?.id, input: "turn 2" });
    expect(second.type).toBe("response.completed");
    // Straight to the pinned worker (no lookup), which is gone: failover moves the session (epoch 2).
    expect(lookupsBeforeWorker(steps)).toEqual([]);
    expect(steps).toContain("SESSIONS.reassign");
    const mover = fake.requests.length - 1;
    expect(fake.urls[mover]).not.toBe(owner);
    expect(fake.requests[mover]).toMatchObject({ sessionId, epoch: 2n });
    await recorded(sessionId, 2);

    burstOfOtherSessions();
    steps.length = 0;
    const third = await ws.turn("main", { previous_response_id: second.response?.id, input: "turn 3" });
    expect(third.type).toBe("response.completed");
    expect(lookupsBeforeWorker(steps)).toEqual([]);
    expect(fake.urls.at(-1)).toBe(fake.urls[mover]);
    expect(fake.requests.at(-1)).toMatchObject({ sessionId, epoch: 2n });
    await recorded(sessionId, 3);
    await ws.close();
  });

  it("moves a lane whose pinned worker was drained through the SessionDO, serves the turn and re-pins", async () => {
    const workers = ["http://10.0.9.3:1", "http://10.0.9.4:1"];
    await registerWorkers(workers);
    const steps: string[] = [];
    fake = textWorker(steps, undefined, { urls: [WORKER_URL, ...workers] });
    const ws = await openSocket(steps);
    const first = await ws.turn("main", { input: "turn 1" });
    const sessionId = fake.requests[0]?.sessionId ?? "";
    const owner = fake.urls[0] ?? "";
    await recorded(sessionId, 1);
    // The owner is drained (its sessions move lazily); this isolate's pool view sees it.
    const region = loadConfig(env).regions[0];
    const pool = env.POOLS.getByName("pool:local");
    const drain = (state: "drained" | null) =>
      pool.setDrain({
        region: "local",
        staticUrls: region?.workers ?? [],
        timeoutMs: 60_000,
        worker: owner,
        drain: state,
      });
    expect(await drain("drained")).not.toBeNull();
    invalidatePoolView();
    try {
      steps.length = 0;
      const second = await ws.turn("main", { previous_response_id: first.response?.id, input: "turn 2" });
      expect(second.type).toBe("response.completed");
      // The pin names a worker no longer routable: the SessionDO moves the session (epoch 2).
      expect(lookupsBeforeWorker(steps)).toEqual(["SESSIONS.open"]);
      expect(fake.urls.at(-1)).not.toBe(owner);
      expect(fake.requests.at(-1)).toMatchObject({ sessionId, epoch: 2n });
      await recorded(sessionId, 2);

      burstOfOtherSessions();
      steps.length = 0;
      const third = await ws.turn("main", { previous_response_id: second.response?.id, input: "turn 3" });
      expect(third.type).toBe("response.completed");
      expect(lookupsBeforeWorker(steps)).toEqual([]);
      expect(fake.urls.at(-1)).toBe(fake.urls.at(-2));
      expect(fake.requests.at(-1)).toMatchObject({ sessionId, epoch: 2n });
      await recorded(sessionId, 3);
    } finally {
      await drain(null);
      invalidatePoolView();
      await ws.close();
    }
  });
});
