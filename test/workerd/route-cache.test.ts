/**
 * The isolate's route cache (edge/session/route-cache.ts) on real SessionDOs: a continuing turn on a
 * route the DO confirmed asks no SessionDO before the worker, a route the worker refuses as stale
 * (the session moved: epoch + 1) is re-resolved through the DO and served, and another tenant never
 * gets the entry.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import type { Env } from "../../edge/env.ts";
import edge from "../../edge/index.ts";
import { routeCache } from "../../edge/session/route-cache.ts";
import { hintSessionId } from "../../edge/session/routing.ts";
import { StopReason, WorkerErrorCode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker, sleep, WORKER_URL } from "./fake-worker.ts";
import { LOCAL_KEY, messagesBody, OTHER_KEY } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";

let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

type Step = string; // "SESSIONS.<method>" when issued, "SESSIONS.<method> done" for a delayed one, or "generate"

/** The test env with every SessionDO call logged when issued; those in `delayMs` answer that much later. */
function loggingEnv(steps: Step[], delayMs: Record<string, number> = {}): Env {
  return new Proxy(env, {
    get(target, prop) {
      const value = Reflect.get(target, prop) as unknown;
      if (prop !== "SESSIONS") return value;
      const ns = value as DurableObjectNamespace;
      return {
        getByName: (name: string, options?: Parameters<DurableObjectNamespace["getByName"]>[1]) => {
          const stub = ns.getByName(name, options) as unknown as Record<string, (...a: unknown[]) => unknown>;
          return new Proxy(stub, {
            get(s, method) {
              if (typeof method !== "string" || method === "then") return s[method as string];
              const name = `SESSIONS.${method}`;
              return async (...args: unknown[]) => {
                steps.push(name);
                const delay = delayMs[name];
                if (delay === undefined) return s[method]?.(...args);
                await sleep(delay);
                const result = await s[method]?.(...args);
                steps.push(`${name} done`);
                return result;
              };
            },
          });
        },
      };
    },
  });
}

/** One streamed turn, read to its end, with the edge's after-response work settled. */
async function turn(
  steps: Step[],
  body: Record<string, unknown>,
  options: { key?: string; hint?: string; delayMs?: Record<string, number> } = {},
) {
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { "x-api-key": options.key ?? LOCAL_KEY, "content-type": "application/json" };
  if (options.hint) headers["x-claude-code-session-id"] = options.hint;
  const request = new Request("http://edge.test/v1/messages", {
    method: "POST",
    headers,
    body: JSON.stringify({ ...body, stream: true }),
  });
  const response = await edge.fetch(
    request as Parameters<typeof edge.fetch>[0],
    loggingEnv(steps, options.delayMs),
    ctx,
  );
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { status: response.status, route: response.headers.get("x-frontier-route"), text };
}

/** A worker that answers every turn with one tool call (a fresh ID of the request's session). */
function toolWorker(steps: Step[], refuse?: (epoch: number) => boolean) {
  return installFakeWorker(async function* ({ request }) {
    steps.push("generate");
    if (refuse?.(Number(request.epoch))) {
      yield event({ case: "error", value: { code: WorkerErrorCode.STALE_EPOCH, message: "stale", param: "epoch" } });
      return;
    }
    yield event({ case: "prompt", value: { promptTokens: 9, messageId: "msg_rc" } });
    const id = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
    yield event({ case: "toolCallStart", value: { index: 0, id, name: "Read" } });
    yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: '{"path":"a"}' } });
    yield event({ case: "toolCallEnd", value: { index: 0 } });
    yield event({ case: "stop", value: { reason: StopReason.TOOL_USE } });
  });
}

/** The tool_use id the session's last turn minted (its frontier). */
async function frontierId(sessionId: string): Promise<string> {
  return (await env.SESSIONS.getByName(sessionId).get("local"))?.frontierToolUseIds[0] ?? "";
}

function toolResultBody(toolId: string) {
  return messagesBody({
    messages: [
      { role: "user", content: "read a" },
      { role: "assistant", content: [{ type: "tool_use", id: toolId, name: "Read", input: { path: "a" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: "text of a" }] },
    ],
  });
}

describe("the isolate's route cache", () => {
  it("a continuing turn on a confirmed route asks no SessionDO before the worker, and records after", async () => {
    const first: Step[] = [];
    fake = toolWorker(first);
    await turn(first, messagesBody({ messages: [{ role: "user", content: "read a" }] }));
    const sessionId = fake.requests[0]?.sessionId ?? "";
    const steps: Step[] = [];
    fake.restore();
    fake = toolWorker(steps);
    const next = await turn(steps, toolResultBody(await frontierId(sessionId)));
    expect(next).toMatchObject({ status: 200, route: "tool-result; epoch=1" });
    expect(fake.requests[0]?.sessionId).toBe(sessionId);
    expect(steps).toEqual(["generate", "SESSIONS.recordTurn"]);
    expect(await env.SESSIONS.getByName(sessionId).get("local")).toMatchObject({ turns: 2, busy: false });

    // The same turn with the entry gone (another isolate's view) opens the session before the worker.
    routeCache.forget("local", sessionId);
    const uncached: Step[] = [];
    fake.restore();
    fake = toolWorker(uncached);
    expect((await turn(uncached, toolResultBody(await frontierId(sessionId)))).status).toBe(200);
    expect(uncached).toEqual(["SESSIONS.open", "generate", "SESSIONS.recordTurn"]);
  });

  it("a route the worker refuses as stale is re-resolved through the SessionDO and served at the new epoch", async () => {
    const first: Step[] = [];
    fake = toolWorker(first);
    await turn(first, messagesBody({ messages: [{ role: "user", content: "read a" }] }));
    const sessionId = fake.requests[0]?.sessionId ?? "";
    // The session moves (a drain's hand-over, from another isolate): epoch 2; this isolate still has epoch 1.
    expect(
      await env.SESSIONS.getByName(sessionId).handOver({ tenant: "local", fromUrl: WORKER_URL, workerUrl: WORKER_URL }),
    ).toBe(2);
    const steps: Step[] = [];
    fake.restore();
    fake = toolWorker(steps, (epoch) => epoch < 2);
    const next = await turn(steps, toolResultBody(await frontierId(sessionId)));
    expect(next).toMatchObject({ status: 200, route: "tool-result; epoch=2" });
    expect(fake.requests.map((r) => Number(r.epoch))).toEqual([1, 2]);
    // The refused attempt releases (a no-op: a cached route holds no lease), then the DO routes it.
    expect(steps).toEqual(["generate", "SESSIONS.release", "SESSIONS.open", "generate", "SESSIONS.recordTurn"]);
    expect(await env.SESSIONS.getByName(sessionId).get("local")).toMatchObject({ epoch: 2, turns: 2, busy: false });

    // The new epoch is what the isolate now holds: the next turn goes straight to the worker at epoch 2.
    const after: Step[] = [];
    fake.restore();
    fake = toolWorker(after, (epoch) => epoch < 2);
    expect((await turn(after, toolResultBody(await frontierId(sessionId)))).route).toBe("tool-result; epoch=2");
    expect(after).toEqual(["generate", "SESSIONS.recordTurn"]);
  });

  it("another tenant never gets a tenant's cached route, not even with the same hint", async () => {
    const hint = crypto.randomUUID();
    const steps: Step[] = [];
    fake = installFakeWorker(function* () {
      steps.push("generate");
      yield event({ case: "prompt", value: { promptTokens: 5, messageId: "msg_h" } });
      yield event({ case: "textDelta", value: { text: "hi" } });
      yield event({ case: "stop", value: { reason: StopReason.END_TURN } });
    });
    const history = (n: number) =>
      messagesBody({
        messages: Array.from({ length: 2 * n + 1 }, (_, i) =>
          i % 2 ? { role: "assistant", content: "hi" } : { role: "user", content: "hi" },
        ),
      });
    await turn(steps, history(0), { hint });
    const mine = await hintSessionId("local", hint);
    expect(fake.requests[0]?.sessionId).toBe(mine);
    steps.length = 0;
    const cached = await turn(steps, history(1), { hint, delayMs: { "SESSIONS.hold": 30 } });
    expect(cached.route).toBe("hint; epoch=1");
    // A cached hinted turn takes the session's lease alongside the worker call, not before it.
    expect(steps).toEqual(["SESSIONS.hold", "generate", "SESSIONS.hold done", "SESSIONS.recordTurn"]);

    steps.length = 0;
    const theirs = await turn(steps, history(1), { hint, key: OTHER_KEY });
    expect(theirs.status).toBe(200);
    const other = fake.requests[2]?.sessionId;
    expect(other).toBe(await hintSessionId("other", hint));
    expect(other).not.toBe(mine);
    expect(steps[0]).toBe("SESSIONS.open"); // asked the DO: no entry of its own
    expect(await env.SESSIONS.getByName(mine).get("other")).toBeNull();
    expect(await env.SESSIONS.getByName(mine).get("local")).toMatchObject({ turns: 2 });
  });
});
