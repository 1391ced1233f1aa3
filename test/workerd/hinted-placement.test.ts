/**
 * Issue 42 item 4, inside workerd over two fake workers: a conversation that carries a hint
 * (`x-claude-code-session-id`) is placed by the pool's rule like one without (on main it went to an
 * FNV hash of the hint: half of these landed on the other worker), the hint then binds its
 * follow-ups to that worker, a worker whose queue is full or every sequence busy gets no new session
 * while another has room, and a new session a worker refuses as OVERLOADED is tried once on another.
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StopReason, WorkerErrorCode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { prefixFingerprint } from "../../shared/prefix-fingerprint.ts";
import { event, type FakeWorker, installFakeWorker, WORKER_URL } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";
import { heartbeat, leaveAll, withoutStaticWorker } from "./pool-fakes.ts";

const SECRET = env.ID_SECRET ?? "";
const [A, B] = ["http://10.0.11.1:1", "http://10.0.11.2:1"];
const SYSTEM = "You are the team's coding agent.";
let fake: FakeWorker | undefined;
/** Workers that answer every Generate with OVERLOADED (their queue is full). */
const overloaded = new Set<string>();

beforeEach(async () => {
  overloaded.clear();
  fake = installFakeWorker(
    async function* ({ request, url }) {
      if (overloaded.has(url)) {
        const message = "all sequences are busy and the queue is full; retry shortly";
        yield event({ case: "error", value: { code: WorkerErrorCode.OVERLOADED, message, param: "" } });
        return;
      }
      const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 9, messageId } });
      yield event({ case: "textDelta", value: { text: "ok" } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    },
    { urls: [WORKER_URL, A, B] },
  );
  await withoutStaticWorker();
});

afterEach(async () => {
  fake?.restore();
  await leaveAll();
});

/** A turn of the hinted conversation `hint`: its status, route and the worker that ran it. */
async function hinted(hint: string, extra: Record<string, unknown> = {}) {
  const calls = fake?.urls.length ?? 0;
  const response = await call("/v1/messages", {
    method: "POST",
    body: messagesBody({ system: SYSTEM, ...extra }),
    headers: { "x-claude-code-session-id": hint },
  });
  await response.arrayBuffer();
  return {
    status: response.status,
    route: response.headers.get("x-frontier-route") ?? "",
    workers: fake?.urls.slice(calls) ?? [],
  };
}

const followUp = {
  messages: [
    { role: "user", content: "hi" },
    { role: "assistant", content: "ok" },
    { role: "user", content: "more" },
  ],
};

describe("a hinted new conversation is placed like any other", () => {
  it("lands on the worker holding its system + tools prefix while that worker has room, and its follow-ups stay", async () => {
    const prefix = await prefixFingerprint("local", { system: [SYSTEM], tools: [] });
    const hints = Array.from({ length: 6 }, () => crypto.randomUUID());
    for (const hint of hints) {
      // b holds the prefix (and more sessions than a); each heartbeat resets the pool's pending count.
      await heartbeat(A);
      await heartbeat(B, { prefixes: [prefix], resident_sessions: 2 });
      const first = await hinted(hint);
      expect(first).toMatchObject({ status: 200, route: "hint; epoch=1", workers: [B] });
    }
    const stats = await env.POOLS.getByName("pool:local").stats();
    expect(stats.prefixHits).toBeGreaterThanOrEqual(6);
    // The hint binds: b no longer advertises the prefix and is busier, yet follow-ups stay on b.
    await heartbeat(B, { prefixes: [], resident_sessions: 4, sequences_free: 0 });
    for (const hint of hints.slice(0, 3)) {
      expect(await hinted(hint, followUp)).toMatchObject({ status: 200, route: "hint; epoch=1", workers: [B] });
    }
  });

  it("never goes to a worker whose sequences are all running and whose queue is full while another is idle", async () => {
    const prefix = await prefixFingerprint("local", { system: [SYSTEM], tools: [] });
    for (let i = 0; i < 6; i++) {
      await heartbeat(A);
      // b holds the prefix but runs a turn on each sequence and its queue (2) is full.
      await heartbeat(B, {
        prefixes: [prefix],
        sequences_free: 0,
        active_requests: 6,
        resident_sessions: 4,
        queue_depth: 2,
        queue_capacity: 2,
      });
      expect(await hinted(crypto.randomUUID())).toMatchObject({ status: 200, workers: [A] });
    }
  });

  it("is refused with 529 at the edge, saying the queues are full, when every worker up has a full queue", async () => {
    const full = { sequences_free: 0, active_requests: 6, resident_sessions: 4, queue_depth: 2, queue_capacity: 2 };
    await heartbeat(A, full);
    await heartbeat(B, full);
    const calls = fake?.urls.length ?? 0;
    const response = await call("/v1/messages", { method: "POST", body: messagesBody({ system: SYSTEM }) });
    expect(response.status).toBe(529);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error).toEqual({
      type: "overloaded_error",
      message: "Every GPU worker's queue is full; retry shortly",
    });
    // No worker was sent the turn.
    expect(fake?.urls.length).toBe(calls);
  });
});

describe("an OVERLOADED refusal", () => {
  it("of a new session is tried once on another worker; of an existing one, or by every worker, reaches the client as 529", async () => {
    const prefix = await prefixFingerprint("local", { system: [SYSTEM], tools: [] });
    const pool = async () => {
      await heartbeat(A);
      await heartbeat(B, { prefixes: [prefix] }); // new sessions go to b first
    };
    await pool();
    overloaded.add(B);
    // A new conversation, hinted or not, that b refuses runs on a (the session moves: epoch 2).
    const hint = crypto.randomUUID();
    expect(await hinted(hint)).toMatchObject({ status: 200, route: "hint; epoch=2; failover", workers: [B, A] });
    await pool();
    const plain = await call("/v1/messages", { method: "POST", body: messagesBody({ system: SYSTEM }) });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("x-frontier-route")).toBe("new; epoch=2; placement=prefix; failover");
    await plain.arrayBuffer();
    expect(fake?.urls.slice(-2)).toEqual([B, A]);
    // The hinted conversation now lives on a. Its next turn, refused there, is not moved (its live
    // state is on a): the client gets 529 and retries.
    overloaded.add(A);
    overloaded.delete(B);
    expect(await hinted(hint, followUp)).toMatchObject({ status: 529, workers: [A] });
    // A new conversation refused by both workers: two tries, then 529.
    overloaded.add(B);
    await pool();
    expect(await hinted(crypto.randomUUID())).toMatchObject({ status: 529, workers: [B, A] });
  });
});
