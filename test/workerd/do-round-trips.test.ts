/**
 * How many Durable Object round trips a turn waits for, and where: before the edge calls the worker
 * (time to first token) and before the client's final event. Every DO call goes through a counting
 * env that holds it for a few timer ticks, so a call the edge does not wait for finishes only after
 * the worker was called, and one it waits for finishes before. Logic, not timing: the assertions
 * are about order, which the held calls make deterministic.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { parseServerTiming } from "../../edge/core/timing.ts";
import type { Env } from "../../edge/env.ts";
import edge from "../../edge/index.ts";
import { invalidatePoolView } from "../../edge/pool/pool-client.ts";
import { routeCache } from "../../edge/session/route-cache.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { SseDecoder } from "../support/sse-decoder.ts";
import { event, type FakeWorker, installFakeWorker, sleep } from "./fake-worker.ts";
import { LOCAL_KEY, messagesBody } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
const NAMESPACES = ["SESSIONS", "POOLS", "TENANTS", "RESPONSES", "USAGE", "METRICS"] as const;
/** Bookkeeping the edge does after the client's response (waitUntil): not part of a turn's path. */
const BACKGROUND = new Set(["METRICS", "USAGE"]);

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

type Entry = { kind: "call" | "done"; name: string } | { kind: "generate" | "final" };

/**
 * The test env with every DO method call logged when issued and when answered (held 3 ms first, or
 * `hold[name]` ms, e.g. `{ "SESSIONS.recordTurn": 80 }`). The isolate's pool view, once warm, stays
 * warm for the file (POOL_CACHE_MS 10 min, not 1 s): on a loaded machine a second can pass between
 * two turns, and a refresh then comes before the session's open, changing the order under test.
 */
function countingEnv(log: Entry[], hold: Record<string, number> = {}): Env {
  const wrapStub = (ns: string, stub: Record<string, unknown>) =>
    new Proxy(stub, {
      get(target, method) {
        if (typeof method !== "string" || method === "then") return target[method as string];
        const name = `${ns}.${method}`;
        return async (...args: unknown[]) => {
          log.push({ kind: "call", name });
          await sleep(hold[name] ?? 3);
          const rpc = target[method] as (...a: unknown[]) => Promise<unknown>;
          const result = await rpc(...args);
          log.push({ kind: "done", name });
          return result;
        };
      },
    });
  return new Proxy(env, {
    get(target, prop) {
      if (prop === "POOL_CACHE_MS") return "600000";
      const value = Reflect.get(target, prop) as unknown;
      if (!(NAMESPACES as readonly (string | symbol)[]).includes(prop)) return value;
      const ns = value as DurableObjectNamespace;
      return {
        getByName: (name: string, options?: Parameters<DurableObjectNamespace["getByName"]>[1]) =>
          wrapStub(String(prop), ns.getByName(name, options) as unknown as Record<string, unknown>),
      };
    },
  });
}

async function turn(
  log: Entry[],
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  options: { hold?: Record<string, number>; settle?: boolean } = {},
) {
  const ctx = createExecutionContext();
  const request = new Request("http://edge.test/v1/messages", {
    method: "POST",
    headers: { "x-api-key": LOCAL_KEY, "content-type": "application/json", ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  });
  const response = await edge.fetch(request as Parameters<typeof edge.fetch>[0], countingEnv(log, options.hold), ctx);
  expect(response.status).toBe(200);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new SseDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    for (const e of decoder.push(value)) if (e.event === "message_stop") log.push({ kind: "final" });
  }
  const settled = waitOnExecutionContext(ctx); // the edge's waitUntil work (the turn's record among it)
  if (options.settle !== false) await settled;
  return { response, settled };
}

/** The DO calls of one turn, split by what the client waits for. */
function phases(log: readonly Entry[]) {
  const generate = log.findIndex((e) => e.kind === "generate");
  const final = log.findIndex((e) => e.kind === "final");
  // POOLS.view refreshes the isolate's cached pool view (POOL_CACHE_MS): once a second, not per turn.
  const counted = (name: string) => !BACKGROUND.has(name.split(".")[0] ?? "") && name !== "POOLS.view";
  const done = (from: number, to: number) =>
    log.slice(from, to).flatMap((e) => (e.kind === "done" && counted(e.name) ? [e.name] : []));
  return {
    /** Answered before the worker was called: the client's first token waited for each. */
    beforeWorker: done(0, generate),
    /** Answered after the worker was called and before the client saw the turn end. */
    beforeFinal: done(generate, final),
    /** Answered after the client saw the turn end. */
    afterFinal: done(final, log.length),
    issued: log.flatMap((e) => (e.kind === "call" ? [e.name] : [])),
  };
}

function textTurnWorker(log: Entry[]) {
  return installFakeWorker(async function* () {
    log.push({ kind: "generate" });
    yield event({ case: "prompt", value: { promptTokens: 9, messageId: "msg_text" } });
    yield event({ case: "textDelta", value: { text: "done" } });
    yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
  });
}

function toolTurnWorker(log: Entry[]) {
  return installFakeWorker(async function* ({ request }) {
    log.push({ kind: "generate" });
    yield event({ case: "prompt", value: { promptTokens: 9, messageId: "msg_rt" } });
    const id = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
    yield event({ case: "toolCallStart", value: { index: 0, id, name: "Read" } });
    yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"path":"a"}' } });
    yield event({ case: "toolCallEnd", value: { index: 0 } });
    yield event({ case: "stop", value: { reason: StopReason.TOOL_USE } });
  });
}

describe("Durable Object round trips per turn", () => {
  it("a new session waits for none before the worker: created and counted alongside the turn", async () => {
    invalidatePoolView();
    fake = toolTurnWorker([]);
    await turn([], messagesBody()); // warm the isolate's pool view (as any request after the first finds it)
    fake.restore();
    const log: Entry[] = [];
    fake = toolTurnWorker(log);
    await turn(log, messagesBody());
    const { beforeWorker, beforeFinal, afterFinal, issued } = phases(log);
    expect(beforeWorker).toEqual(["TENANTS.admit"]);
    // The single worker up leaves placement no choice: the pool is told, not asked.
    expect(issued).not.toContain("POOLS.place");
    // The final event waits for the session to exist (a signed ID of this turn may name it next),
    // not for the turn's record, which lands after it.
    expect(beforeFinal.sort()).toEqual(["POOLS.notePlaced", "SESSIONS.open"]);
    expect(afterFinal).toContain("SESSIONS.recordTurn");
    expect(issued.filter((n) => n.startsWith("SESSIONS."))).toEqual(["SESSIONS.open", "SESSIONS.recordTurn"]);
    // The tenant's authority: one admission before the worker, one settlement after the response.
    expect(issued.filter((n) => n.startsWith("TENANTS."))).toEqual(["TENANTS.admit", "TENANTS.settle"]);
    expect(afterFinal).toContain("TENANTS.settle");
    const session = await env.SESSIONS.getByName(fake.requests[0]?.sessionId ?? "").get("local");
    expect(session).toMatchObject({ turns: 1, epoch: 1, busy: false });
    expect(session?.frontierToolUseIds).toHaveLength(1);
  });

  it("a tool-result turn opens its session alongside the tenant limiter, and records alongside the final event", async () => {
    const first: Entry[] = [];
    fake = toolTurnWorker(first);
    const opening = messagesBody({ messages: [{ role: "user", content: "read a" }] });
    const { response: firstResponse } = await turn(first, opening);
    expect(firstResponse.headers.get("x-frontier-route")).toMatch(/^new/);
    const sessionId = fake.requests[0]?.sessionId ?? "";
    const toolId = (await env.SESSIONS.getByName(sessionId).get("local"))?.frontierToolUseIds[0] ?? "";
    fake.restore();
    // As an isolate without the route finds it (this one's cache skips the open: route-cache.test.ts).
    routeCache.forget("local", sessionId);

    const log: Entry[] = [];
    fake = toolTurnWorker(log);
    const { response } = await turn(
      log,
      messagesBody({
        messages: [
          { role: "user", content: "read a" },
          { role: "assistant", content: [{ type: "tool_use", id: toolId, name: "Read", input: { path: "a" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: "text of a" }] },
        ],
      }),
    );
    expect(fake.requests[0]?.sessionId).toBe(sessionId);
    // server-timing shows the wait: the held open (3 ms) is in `route`, before the worker's step.
    const timing = parseServerTiming(response.headers.get("server-timing"));
    expect(Object.keys(timing)).toEqual(["route", "admit", "worker", "total"]);
    expect(timing.route).toBeGreaterThanOrEqual(3);
    expect(timing.total).toBe((timing.route ?? 0) + (timing.admit ?? 0) + (timing.worker ?? 0));
    const { beforeWorker, beforeFinal, afterFinal, issued } = phases(log);
    expect(beforeWorker.sort()).toEqual(["SESSIONS.open", "TENANTS.admit"]);
    // Both asked before either answered: one round trip's wait, not two.
    const calls = log.map((e) => (e.kind === "call" || e.kind === "done" ? `${e.kind} ${e.name}` : e.kind));
    expect(calls.indexOf("call SESSIONS.open")).toBeLessThan(calls.indexOf("done TENANTS.admit"));
    expect(calls.indexOf("call TENANTS.admit")).toBeLessThan(calls.indexOf("done SESSIONS.open"));
    expect(beforeFinal).toEqual([]);
    expect(afterFinal).toContain("SESSIONS.recordTurn");
    expect(issued.filter((n) => n.startsWith("SESSIONS."))).toEqual(["SESSIONS.open", "SESSIONS.recordTurn"]);
  });

  it("a JSON answer's body does not wait for the turn's record; server-timing names the step", async () => {
    const log: Entry[] = [];
    fake = toolTurnWorker(log);
    const ctx = createExecutionContext();
    const request = new Request("http://edge.test/v1/messages", {
      method: "POST",
      headers: { "x-api-key": LOCAL_KEY, "content-type": "application/json" },
      body: JSON.stringify(messagesBody()),
    });
    const hold = { "SESSIONS.recordTurn": 1500 };
    const response = await edge.fetch(request as Parameters<typeof edge.fetch>[0], countingEnv(log, hold), ctx);
    expect(response.status).toBe(200);
    const answered = log.length;
    await response.json();
    await waitOnExecutionContext(ctx);
    const timing = parseServerTiming(response.headers.get("server-timing"));
    expect(Object.keys(timing)).toEqual(["route", "admit", "worker", "record", "total"]);
    // The held recordTurn (1.5 s) is not in it; what is left is the record step's own bookkeeping.
    expect(timing.record).toBeLessThan(1500);
    const recorded = log.findIndex((e) => e.kind === "done" && e.name === "SESSIONS.recordTurn");
    expect(recorded).toBeGreaterThanOrEqual(answered);
  });

  it("a turn's metrics (the request's and the turn's) reach the metrics object in one call, after the response", async () => {
    const streamed: Entry[] = [];
    fake = textTurnWorker(streamed);
    await turn(streamed, messagesBody());
    const final = streamed.findIndex((e) => e.kind === "final");
    const metricsCalls = (log: Entry[]) =>
      log.flatMap((e) => (e.kind === "call" && e.name.startsWith("METRICS.") ? [e.name] : []));
    expect(metricsCalls(streamed)).toEqual(["METRICS.add"]);
    expect(streamed.findIndex((e) => e.kind === "call" && e.name === "METRICS.add")).toBeGreaterThan(final);
    fake.restore();
    // A JSON answer is whole when the handler returns: its request's metric still joins its turn's.
    const answered: Entry[] = [];
    fake = textTurnWorker(answered);
    const ctx = createExecutionContext();
    const request = new Request("http://edge.test/v1/messages", {
      method: "POST",
      headers: { "x-api-key": LOCAL_KEY, "content-type": "application/json" },
      body: JSON.stringify(messagesBody()),
    });
    const response = await edge.fetch(request as Parameters<typeof edge.fetch>[0], countingEnv(answered), ctx);
    expect(response.status).toBe(200);
    await response.json();
    await waitOnExecutionContext(ctx);
    expect(metricsCalls(answered)).toEqual(["METRICS.add"]);
  });

  it("a hinted repeat first turn: one open of the hinted session before the worker, the branch made alongside", async () => {
    const hint = { "x-claude-code-session-id": crypto.randomUUID() };
    fake = toolTurnWorker([]);
    await turn([], messagesBody(), hint);
    fake.restore();
    const log: Entry[] = [];
    fake = toolTurnWorker(log);
    const { response } = await turn(log, messagesBody(), hint);
    expect(response.headers.get("x-frontier-route")).toBe("branch; epoch=1");
    const { beforeWorker, beforeFinal, afterFinal } = phases(log);
    // The hinted session exists: it is opened alongside the limiter (only creating one waits for it).
    expect(beforeWorker.sort()).toEqual(["SESSIONS.open", "TENANTS.admit"]);
    const calls = log.map((e) => (e.kind === "call" || e.kind === "done" ? `${e.kind} ${e.name}` : e.kind));
    expect(calls.indexOf("call SESSIONS.open")).toBeLessThan(calls.indexOf("done TENANTS.admit"));
    // The branch's creation, and its placement counted (a sibling is placed like any new session).
    expect(beforeFinal.sort()).toEqual(["POOLS.notePlaced", "SESSIONS.open"]);
    expect(afterFinal).toContain("SESSIONS.recordTurn");
  });

  it("an immediate hinted next turn waits for the record it raced and continues the session", async () => {
    const hint = { "x-claude-code-session-id": crypto.randomUUID() };
    const first: Entry[] = [];
    fake = textTurnWorker(first);
    const opening = [{ role: "user", content: "say done" }];
    // The first turn's record is held long enough that the next request's open arrives before it.
    const { response: firstResponse, settled } = await turn(first, messagesBody({ messages: opening }), hint, {
      hold: { "SESSIONS.recordTurn": 80 },
      settle: false,
    });
    expect(firstResponse.headers.get("x-frontier-route")).toMatch(/^hint/);
    expect(first.some((e) => e.kind === "done" && e.name === "SESSIONS.recordTurn")).toBe(false);
    const next: Entry[] = [];
    const followUp = [...opening, { role: "assistant", content: "done" }, { role: "user", content: "again" }];
    const { response } = await turn(next, messagesBody({ messages: followUp }), hint);
    await settled;
    expect(response.headers.get("x-frontier-route")).toMatch(/^hint/);
    expect(fake.requests.map((r) => r.sessionId)).toEqual([fake.requests[0]?.sessionId, fake.requests[0]?.sessionId]);
    const session = await env.SESSIONS.getByName(fake.requests[0]?.sessionId ?? "").get("local");
    expect(session).toMatchObject({ turns: 2, busy: false });
  });
});
