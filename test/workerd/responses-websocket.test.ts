/**
 * Responses over WebSocket through the real edge in workerd (fake worker): the upgrade is
 * authenticated before anything is accepted; each `response.create` runs the same pipeline as
 * POST /v1/responses and its events arrive one JSON message each; follow-ups with only new items
 * continue from the socket's memory (store: false included); `generate: false` warms up without a
 * worker; `stream_id` lanes echo their id; bad events get an error event and the socket lives on;
 * closing the socket cancels the turn on the worker.
 */
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../edge/config/config.ts";
import { ResponseSent } from "../../edge/core/response-sent.ts";
import { EdgeTiming } from "../../edge/core/timing.ts";
import { ResponsesSocket, SOCKET_LIMITS, type SocketLimits } from "../../edge/protocols/responses/socket/websocket.ts";
import { CacheDecision, Role, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker, sleep } from "./fake-worker.ts";
import { LOCAL_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

interface ServerEvent {
  type: string;
  stream_id?: string;
  status?: number;
  error?: { code: string | null; type: string; message: string };
  delta?: string;
  response?: { id: string; status: string; output: unknown[] };
}

function answers(text: string) {
  return installFakeWorker(async function* ({ request }) {
    const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: 30, messageId, decision: CacheDecision.COLD } });
    yield event({ case: "textDelta", value: { text } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage: { inputTokens: 30, outputTokens: 1 } } });
  });
}

async function upgrade(key: string | null = LOCAL_KEY): Promise<Response> {
  const headers: Record<string, string> = { upgrade: "websocket" };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return exports.default.fetch(new Request("http://edge.test/v1/responses", { headers }));
}

/** An open socket and the events it has received, with a wait for the next terminal one. */
async function open() {
  const response = await upgrade();
  expect(response.status).toBe(101);
  const socket = response.webSocket;
  if (!socket) throw new Error("no webSocket on the 101");
  socket.accept();
  const events: ServerEvent[] = [];
  const waiters: (() => void)[] = [];
  socket.addEventListener("message", (m) => {
    events.push(JSON.parse(m.data as string) as ServerEvent);
    for (const wake of waiters.splice(0)) wake();
  });
  const terminal = (e: ServerEvent) => e.type === "response.completed" || e.type === "error";
  /** Resolve once `count` terminal events have arrived in all. */
  const until = async (count: number): Promise<ServerEvent[]> => {
    while (events.filter(terminal).length < count) await new Promise<void>((wake) => waiters.push(wake));
    return events;
  };
  const send = (body: unknown) => socket.send(typeof body === "string" ? body : JSON.stringify(body));
  return { socket, events, until, send };
}

/**
 * Wait until every session the fake worker saw is free again: closing a socket cancels its turns,
 * and each turn then releases its session lease. The wait proves the release and keeps the test
 * from ending with those Durable Object calls still in flight.
 */
async function sessionsReleased(worker: FakeWorker): Promise<void> {
  for (const request of worker.requests) {
    const session = env.SESSIONS.getByName(request.sessionId);
    for (let i = 0; i < 1000 && (await session.get(request.tenantId))?.busy; i++) await sleep(10);
    expect((await session.get(request.tenantId))?.busy).toBe(false);
  }
}

const create = (extra: Record<string, unknown>) => ({
  type: "response.create",
  model: "frontier-test",
  store: false,
  ...extra,
});

describe("Responses over WebSocket", () => {
  it("refuses an upgrade without a valid key before accepting, and a GET without Upgrade", async () => {
    const refused = await upgrade(null);
    expect(refused.status).toBe(401);
    expect(refused.webSocket).toBeNull();
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe("authentication_error");
    expect((await upgrade("sk-wrong")).status).toBe(401);
    const plain = await exports.default.fetch(new Request("http://edge.test/v1/responses"));
    expect(plain.status).toBe(426);
  });

  it("streams a turn as JSON messages and continues from the socket's memory with store: false", async () => {
    fake = answers("hello");
    const ws = await open();
    ws.send(create({ input: "first question" }));
    const first = await ws.until(1);
    expect(first.map((e) => e.type)).toContain("response.output_text.delta");
    const done = first.find((e) => e.type === "response.completed");
    expect(done?.response?.status).toBe("completed");
    const id = done?.response?.id ?? "";
    expect(id).toMatch(/^resp_/);

    ws.send(create({ previous_response_id: id, input: "second question" }));
    await ws.until(2);
    const [turn1, turn2] = fake.requests;
    expect(turn2?.sessionId).toBe(turn1?.sessionId);
    const messages = turn2?.conversation?.messages ?? [];
    expect(messages.map((m) => m.role)).toEqual([Role.USER, Role.ASSISTANT, Role.USER]);
    const texts = messages.map((m) =>
      m.content.map((b) => (b.block.case === "text" ? b.block.value.text : "")).join(""),
    );
    expect(texts).toEqual(["first question", "hello", "second question"]);
    // Over HTTP the same id is unknown: it was never stored.
    ws.socket.close();
  });

  it("answers an unknown previous response with an error event and keeps the socket", async () => {
    fake = answers("ok");
    const ws = await open();
    ws.send(create({ previous_response_id: "resp_forged", input: "x" }));
    const [error] = await ws.until(1);
    expect(error?.type).toBe("error");
    expect(error?.status).toBe(404);
    expect(error?.error?.code).toBe("previous_response_not_found");
    ws.send("not json");
    ws.send(create({ input: "y", background: true }));
    ws.send({ type: "response.steer", input: "z" });
    const events = await ws.until(4);
    expect(events.slice(1).map((e) => [e.type, e.status])).toEqual([
      ["error", 400],
      ["error", 400],
      ["error", 400],
    ]);
    ws.send(create({ input: "still here" }));
    expect((await ws.until(5)).at(-1)?.type).toBe("response.completed");
    expect(fake.requests).toHaveLength(1);
    ws.socket.close();
  });

  it("warms up with generate: false without a worker, then continues from it", async () => {
    fake = answers("ok");
    const ws = await open();
    ws.send(create({ input: "warm context", generate: false }));
    const warm = await ws.until(1);
    expect(warm.map((e) => e.type)).toEqual(["response.created", "response.completed"]);
    expect(fake.requests).toHaveLength(0);
    const id = warm[1]?.response?.id ?? "";
    ws.send(create({ previous_response_id: id, input: "now answer" }));
    await ws.until(2);
    const [message] = fake.requests[0]?.conversation?.messages ?? [];
    const text = message?.content.map((b) => (b.block.case === "text" ? b.block.value.text : "")).join("\n");
    expect(text).toContain("warm context");
    expect(text).toContain("now answer");
    ws.socket.close();
  });

  it("echoes each lane's stream_id on its events", async () => {
    fake = answers("ok");
    const ws = await open();
    ws.send(create({ input: "a", stream_id: "lane-a" }));
    ws.send(create({ input: "b", stream_id: "lane-b" }));
    const events = await ws.until(2);
    const lanes = new Set(events.map((e) => e.stream_id));
    expect(lanes).toEqual(new Set(["lane-a", "lane-b"]));
    expect(events.filter((e) => e.type === "response.completed")).toHaveLength(2);
    ws.socket.close();
  });

  it("cancels the worker's call when the socket closes mid-turn", async () => {
    fake = installFakeWorker(async function* ({ request, signal }) {
      const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 5, messageId, decision: CacheDecision.COLD } });
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    });
    const ws = await open();
    ws.send(create({ input: "long" }));
    // Poll on the test's own timers: a promise resolved inside the edge's request would carry its context.
    for (let i = 0; i < 100 && !ws.events.some((e) => e.type === "response.created"); i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(fake.cancelled).toEqual([false]);
    ws.socket.close();
    for (let i = 0; i < 50 && !fake.cancelled[0]; i++) await new Promise((r) => setTimeout(r, 10));
    expect(fake.cancelled).toEqual([true]);
    await sessionsReleased(fake);
  });

  it("refuses a lane past the socket's lane limit with a 429 error event", async () => {
    fake = installFakeWorker(async function* ({ request, signal }) {
      const messageId = await mintId(SECRET, "resp", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 5, messageId, decision: CacheDecision.COLD } });
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    });
    const ws = await open();
    for (let lane = 0; lane <= SOCKET_LIMITS.lanes; lane++) ws.send(create({ input: "x", stream_id: `l${lane}` }));
    // The other lanes' turns start meanwhile: the refusal is the one terminal event, not the first event.
    const refused = (await ws.until(1)).find((e) => e.type === "error");
    expect(refused?.type).toBe("error");
    expect(refused?.status).toBe(429);
    expect(refused?.stream_id).toBe(`l${SOCKET_LIMITS.lanes}`);
    ws.socket.close();
    await sessionsReleased(fake);
  });

  it("closes a socket left idle, and one past its age once its turns are done", async () => {
    const rc = {
      env,
      config: loadConfig(env),
      requestId: "req_test",
      waitUntil: () => undefined,
      timing: new EdgeTiming(),
      sent: new ResponseSent(() => undefined),
      rateLimits: {},
    };
    const closedAfter = async (limits: SocketLimits): Promise<string> => {
      const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
      server.accept();
      client.accept();
      const closed = new Promise<string>((resolve) => client.addEventListener("close", (e) => resolve(e.reason)));
      new ResponsesSocket(
        server,
        rc,
        { tenant: "local", keyId: "k", credential: { kind: "env" as const } },
        new Headers(),
        limits,
      ).listen();
      return closed;
    };
    expect(await closedAfter({ ...SOCKET_LIMITS, idleMs: 30 })).toBe("idle");
    expect(await closedAfter({ ...SOCKET_LIMITS, maxAgeMs: 20 })).toMatch(/age limit/);
  });
});
