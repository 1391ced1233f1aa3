/**
 * Issue 42 item 5, inside workerd over two fake workers: a worker that restarts (or comes back from
 * down) has lost its memory of the epochs it served, so it would accept a turn at any epoch. The
 * only turns the edge sends without asking the SessionDO are those on a cached route (route-cache.ts,
 * a WebSocket lane's pin); a route confirmed before its worker last came back is not used, so the
 * turn goes through the SessionDO to where the session is now, at its current epoch. On main the
 * turn went to the restarted worker at the old epoch (and its record was then refused by the DO).
 */
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker, WORKER_URL } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";
import { heartbeat, leaveAll, withoutStaticWorker } from "./pool-fakes.ts";

const SECRET = env.ID_SECRET ?? "";
const [A, B] = ["http://10.0.13.1:1", "http://10.0.13.2:1"];
let fake: FakeWorker | undefined;

beforeEach(async () => {
  // Every turn ends in one tool call minted for its session: the next turn names the session by its ID.
  fake = installFakeWorker(
    async function* ({ request }) {
      const id = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
      const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: 9, decision: CacheDecision.COLD, messageId } });
      yield event({ case: "toolCallStart", value: { index: 0, id, name: "lookup" } });
      yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: "{}" } });
      yield event({ case: "toolCallEnd", value: { index: 0 } });
      yield event({ case: "stop", value: { reason: StopReason.TOOL_USE, usage: { outputTokens: 3 } } });
    },
    { urls: [WORKER_URL, A, B] },
  );
  await withoutStaticWorker();
  await heartbeat(A);
  await heartbeat(B);
});

afterEach(async () => {
  fake?.restore();
  await leaveAll();
});

async function turn(body: Record<string, unknown>) {
  const response = await call("/v1/messages", { method: "POST", body: messagesBody(body) });
  expect(response.status).toBe(200);
  const json = (await response.json()) as { content: { id?: string }[] };
  return { toolUseId: json.content[0]?.id ?? "", request: fake?.requests.at(-1), url: fake?.urls.at(-1) };
}

const results = (id: string) => ({
  messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] }],
});

describe("a cached route to a worker that came back", () => {
  it("is not used: the turn goes through the SessionDO to the session's worker at its current epoch", async () => {
    const first = await turn({ system: "fencing" });
    const session = first.request?.sessionId ?? "";
    const owner = first.url ?? "";
    const other = owner === A ? B : A;
    // The turn was recorded: this isolate caches the route (owner, epoch 1).
    await vi.waitFor(async () => expect((await env.SESSIONS.getByName(session).get("local"))?.turns).toBe(1));
    const cached = await turn(results(first.toolUseId));
    expect([cached.url, cached.request?.epoch]).toEqual([owner, 1n]);
    await vi.waitFor(async () => expect((await env.SESSIONS.getByName(session).get("local"))?.turns).toBe(2));

    // Elsewhere (another isolate) the owner failed: marked down, the session moved on (epoch 2).
    await env.POOLS.getByName("pool:local").markDown(owner);
    const moved = await env.SESSIONS.getByName(session).reassign({
      tenant: "local",
      requestId: "req_elsewhere",
      fromEpoch: 1,
      workerUrl: other,
    });
    expect(moved).toMatchObject({ status: "ok", epoch: 2, workerUrl: other });
    await env.SESSIONS.getByName(session).release({ tenant: "local", requestId: "req_elsewhere" });
    // The owner restarts (a new boot id) and heartbeats: it is up again, knowing no epochs.
    await heartbeat(owner, { boot: "boot2" });

    const next = await turn(results(cached.toolUseId));
    expect(next.url).toBe(other);
    expect(next.request?.epoch).toBe(2n);
  });
});
