/**
 * Issue 42 item 3, inside workerd over two fake workers (the deadlines are 2.5 s here,
 * vitest.workerd.config.ts): a worker that dies mid-stream, or goes silent past the idle deadline,
 * ends the client's stream with the protocol's error event (or a clean 500 body) and is marked down
 * at once, so the next new session goes to the other worker; one that never answers (the connect
 * deadline) fails over before the client has a byte. Each is counted in the edge metrics. On main a
 * silent worker held the stream open, and no mid-stream failure marked its worker down.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { SseDecoder } from "../support/sse-decoder.ts";
import { event, type FakeWorker, installFakeWorker, WORKER_URL } from "./fake-worker.ts";
import { call, type ErrorBody, messagesBody } from "./helpers.ts";
import { heartbeat, leaveAll, metric, stateOf, withoutStaticWorker } from "./pool-fakes.ts";

const SECRET = env.ID_SECRET ?? "";
const [A, B] = ["http://10.0.12.1:1", "http://10.0.12.2:1"];
let fake: FakeWorker | undefined;
/** How each worker fails its next turns (none: it serves them). */
const failing = new Map<string, "dies" | "silent">();
const frozen = new Set<string>();

beforeEach(async () => {
  failing.clear();
  frozen.clear();
  fake = installFakeWorker(
    async function* ({ request, url, signal }) {
      const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 9, messageId } });
      yield event({ case: "textDelta", value: { text: "partial" } });
      const how = failing.get(url);
      if (how === "dies") throw new Error("worker died");
      if (how === "silent") await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    },
    { urls: [WORKER_URL, A, B], frozen },
  );
  await withoutStaticWorker();
  await heartbeat(A);
  await heartbeat(B);
});

afterEach(async () => {
  fake?.restore();
  await leaveAll();
});

/** A streamed new conversation on the worker placement picks: its events and the worker(s) it reached. */
async function streamed() {
  const calls = fake?.urls.length ?? 0;
  const response = await call("/v1/messages", { method: "POST", body: messagesBody({ stream: true }) });
  const decoder = new SseDecoder();
  const events = [...decoder.push(new Uint8Array(await response.arrayBuffer())), ...decoder.end()];
  const last = JSON.parse(events.at(-1)?.data ?? "{}") as Partial<ErrorBody>;
  const route = response.headers.get("x-frontier-route") ?? "";
  return {
    status: response.status,
    route,
    events: events.map((e) => e.event),
    last,
    workers: fake?.urls.slice(calls) ?? [],
  };
}

/** Make both workers fail `how`: the first new session's worker is the one that fails. */
function bothFail(how: "dies" | "silent"): void {
  failing.set(A, how);
  failing.set(B, how);
}

describe("a worker failing mid-stream", () => {
  it("dies: the stream ends with api_error, the worker is down at once, the next new session goes elsewhere", async () => {
    const before = await metric("frontier:edge_workers_marked_down_total", { reason: "lost" });
    bothFail("dies");
    const cut = await streamed();
    expect(cut.status).toBe(200);
    expect(cut.events.at(-1)).toBe("error");
    expect(cut.last.error?.type).toBe("api_error");
    const [dead] = cut.workers;
    await vi.waitFor(async () => expect(await stateOf(dead ?? "")).toBe("down"));
    failing.clear();
    const next = await streamed();
    expect(next.events.at(-1)).toBe("message_stop");
    expect(next.workers).toEqual([dead === A ? B : A]);
    await vi.waitFor(async () =>
      expect(await metric("frontier:edge_workers_marked_down_total", { reason: "lost" })).toBe(before + 1),
    );
    // Its next heartbeat marks it up again.
    await heartbeat(dead ?? "");
    expect(await stateOf(dead ?? "")).toBe("up");
  });

  it("goes silent: cut at the idle deadline with the error event (streaming) or a 500 body (JSON), and marked down", async () => {
    const cuts = () => metric("frontier:edge_streams_cut_total", { deadline: "idle" });
    const before = await cuts();
    bothFail("silent");
    const cut = await streamed();
    expect(cut.events.slice(-1)).toEqual(["error"]);
    expect(cut.events).not.toContain("message_stop");
    expect(cut.last.error).toMatchObject({ type: "api_error" });
    expect(cut.last.error?.message).toMatch(/stopped responding .*within 2500 ms/);
    const [silent] = cut.workers;
    await vi.waitFor(async () => expect(await stateOf(silent ?? "")).toBe("down"));
    expect(fake?.cancelled.at(-1)).toBe(true); // the edge cancelled the call
    // Non-streaming, on the other worker: a clean 500 that says not to retry the request.
    const json = await call("/v1/messages", { method: "POST", body: messagesBody() });
    expect(json.status).toBe(500);
    expect(json.headers.get("x-should-retry")).toBe("false");
    expect(((await json.json()) as ErrorBody).error.type).toBe("api_error");
    await vi.waitFor(async () => expect(await cuts()).toBe(before + 2));
    expect(await metric("frontier:edge_workers_marked_down_total", { reason: "deadline" })).toBeGreaterThanOrEqual(2);
  });

  it("never answers: the connect deadline moves a new session to the other worker before the first byte", async () => {
    const connects = () => metric("frontier:edge_streams_cut_total", { deadline: "connect" });
    const before = await connects();
    frozen.add(A);
    frozen.add(B);
    // Thaw the worker the session did not land on first, whichever placement picked.
    const original = fake?.urls.length ?? 0;
    const pending = streamed();
    await vi.waitFor(() => expect(fake?.urls.length).toBe(original + 1));
    frozen.delete(fake?.urls.at(-1) === A ? B : A);
    const moved = await pending;
    expect(moved.status).toBe(200);
    expect(moved.route).toMatch(/^new; epoch=2; .*failover$/);
    expect(moved.events.at(-1)).toBe("message_stop");
    expect(new Set(moved.workers).size).toBe(2);
    expect(await stateOf(moved.workers[0] ?? "")).toBe("down");
    await vi.waitFor(async () => expect(await connects()).toBe(before + 1));
  });
});
