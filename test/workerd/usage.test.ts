/**
 * Usage per tenant: every finished turn is counted in its tenant's authority ledger (daily buckets and
 * totals, per key id), the totals after a tool loop equal the sum of the usage the client was shown, a turn
 * that failed over is counted once, a repeated report of one request id is ignored, and the admin
 * endpoint refuses callers without the admin token.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { CacheDecision, StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { parsePromText, sampleSum } from "../support/prom-text.ts";
import { event, type FakeWorker, installFakeWorker, WORKER_URL } from "./fake-worker.ts";
import { call, LOCAL_KEY, messagesBody } from "./helpers.ts";

const SECRET = env.ID_SECRET ?? "";
const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
const POOL_TOKEN = "frontier-dev-pool-token-change-me";
let fake: FakeWorker | undefined;
afterEach(() => fake?.restore());

interface Totals {
  turns: number;
  inputTokens: number;
  cachedTokens: number;
  prefilledTokens: number;
  outputTokens: number;
}
interface UsageBody {
  tenants: {
    tenant: string;
    days: (Totals & { day: string; keyId: string })[];
    keys: (Totals & { keyId: string })[];
  }[];
}
interface ClientUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

async function usage(tenant = "local"): Promise<Totals> {
  const response = await call(`/admin/usage?tenant=${tenant}`, { key: ADMIN_TOKEN, bearer: true });
  expect(response.status).toBe(200);
  const body = (await response.json()) as UsageBody;
  const keys = body.tenants[0]?.keys ?? [];
  const sum = (f: keyof Totals) => keys.reduce((a, k) => a + k[f], 0);
  return {
    turns: sum("turns"),
    inputTokens: sum("inputTokens"),
    cachedTokens: sum("cachedTokens"),
    prefilledTokens: sum("prefilledTokens"),
    outputTokens: sum("outputTokens"),
  };
}

/** Usage is recorded after the response (waitUntil): wait until `turns` counted turns show up. */
async function usageAfter(turns: number): Promise<Totals> {
  for (let i = 0; i < 100; i++) {
    const now = await usage();
    if (now.turns >= turns) return now;
    await new Promise((r) => setTimeout(r, 20));
  }
  return usage();
}

/** Turn n of a loop: the worker reuses more and prefills a little each time, and calls a tool until turn 3. */
function loopWorker(urls?: string[], unreachable?: Set<string>): FakeWorker {
  let turn = 0;
  return installFakeWorker(
    async function* ({ request }) {
      turn++;
      const cached = turn === 1 ? 0 : 40 * turn;
      const prefilled = 11 + turn;
      const messageId = await mintId(SECRET, "msg", request.tenantId, request.sessionId);
      yield event({
        case: "prompt",
        value: { promptTokens: cached + prefilled, cachedTokens: cached, decision: CacheDecision.COLD, messageId },
      });
      if (turn < 3) {
        const id = await mintId(SECRET, "toolu", request.tenantId, request.sessionId);
        yield event({ case: "toolCallStart", value: { index: 0, id, name: "lookup" } });
        yield event({ case: "toolCallDelta", value: { index: 0, argumentsJson: "{}" } });
        yield event({ case: "toolCallEnd", value: { index: 0 } });
      } else {
        yield event({ case: "textDelta", value: { text: "done" } });
      }
      yield event({
        case: "stop",
        value: {
          reason: turn < 3 ? StopReason.TOOL_USE : StopReason.END_TURN,
          usage: { inputTokens: prefilled, cachedTokens: cached, outputTokens: 5 + turn },
        },
      });
    },
    { urls, unreachable },
  );
}

async function send(messages: unknown[]): Promise<{ usage: ClientUsage; content: { type: string; id?: string }[] }> {
  const response = await call("/v1/messages", { method: "POST", body: messagesBody({ system: "usage", messages }) });
  expect(response.status).toBe(200);
  return (await response.json()) as { usage: ClientUsage; content: { type: string; id?: string }[] };
}

/** A pooled worker at `url` joins (or leaves) the local pool. */
function heartbeat(url: string, leaving: boolean): Promise<Response> {
  const body = {
    id: `w-${url.split(".").at(-1)?.replace(":", "-")}`,
    region: "local",
    url,
    boot: "boot1",
    model_identity: "m",
    sequences_total: 4,
    sequences_free: 4,
    prefixes: [],
    draining: false,
    leaving,
  };
  return call("/internal/pool/heartbeat", {
    method: "POST",
    key: null,
    body,
    headers: { authorization: `Bearer ${POOL_TOKEN}` },
  });
}

const results = (id: string) => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] });

describe("usage per tenant", () => {
  it("refuses /admin/usage without the admin token", async () => {
    expect((await call("/admin/usage", { key: null })).status).toBe(401);
    expect((await call("/admin/usage", { key: LOCAL_KEY, bearer: true })).status).toBe(401);
    expect((await call("/admin/usage", { key: POOL_TOKEN, bearer: true })).status).toBe(401);
    expect((await call("/admin/usage?from=yesterday", { key: ADMIN_TOKEN, bearer: true })).status).toBe(400);
    expect((await call("/admin/usage?tenant=nobody", { key: ADMIN_TOKEN, bearer: true })).status).toBe(404);
    const all = await call("/admin/usage", { key: ADMIN_TOKEN, bearer: true });
    // Every configured tenant, sorted (vitest.workerd.config.ts API_KEYS).
    expect(((await all.json()) as UsageBody).tenants.map((t) => t.tenant)).toEqual([
      "limited",
      "local",
      "other",
      "solo",
    ]);
  });

  it("totals after a tool loop equal the sum of the usage each turn reported", async () => {
    fake = loopWorker();
    const before = await usage();
    const shown: ClientUsage[] = [];
    const first = await send([{ role: "user", content: "loop" }]);
    shown.push(first.usage);
    const second = await send([results(first.content[0]?.id ?? "")]);
    shown.push(second.usage);
    const third = await send([results(second.content[0]?.id ?? "")]);
    shown.push(third.usage);
    expect(third.content[0]?.type).toBe("text");

    const after = await usageAfter(before.turns + 3);
    const sum = (f: (u: ClientUsage) => number) => shown.reduce((a, u) => a + f(u), 0);
    expect(after.turns - before.turns).toBe(3);
    expect(after.prefilledTokens - before.prefilledTokens).toBe(sum((u) => u.input_tokens));
    expect(after.cachedTokens - before.cachedTokens).toBe(sum((u) => u.cache_read_input_tokens));
    expect(after.inputTokens - before.inputTokens).toBe(sum((u) => u.input_tokens + u.cache_read_input_tokens));
    expect(after.outputTokens - before.outputTokens).toBe(sum((u) => u.output_tokens));
    expect(sum((u) => u.cache_read_input_tokens)).toBeGreaterThan(0);

    // Bucketed by UTC day and by a key id that is a hash prefix, never the key.
    const body = (await (
      await call("/admin/usage?tenant=local", { key: ADMIN_TOKEN, bearer: true })
    ).json()) as UsageBody;
    const day = body.tenants[0]?.days.find((d) => d.day === new Date().toISOString().slice(0, 10));
    expect(day?.keyId).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(body)).not.toContain(LOCAL_KEY);
    // Another tenant sees none of it.
    expect((await usage("other")).turns).toBe(0);
  });

  it("counts a failed-over turn once, and a repeated report of one request id once", async () => {
    const [a, b] = ["http://10.0.9.1:1", "http://10.0.9.2:1"];
    const unreachable = new Set<string>();
    fake = loopWorker([WORKER_URL, a, b], unreachable);
    for (const url of [a, b]) expect((await heartbeat(url, false)).status).toBe(200);
    const start = (await usage()).turns;
    const first = await send([{ role: "user", content: "failover" }]);
    // Its usage is recorded after the response (waitUntil): count from once it is in.
    const before = await usageAfter(start + 1);
    const failovers = async () => {
      const text = await (await call("/admin/metrics", { key: ADMIN_TOKEN, bearer: true })).text();
      return sampleSum(parsePromText(text), "frontier:edge_failovers_total", { reason: "unreachable" });
    };
    const failoversBefore = await failovers();
    unreachable.add(fake.urls.at(-1) ?? "");
    const response = await call("/v1/messages", {
      method: "POST",
      body: messagesBody({ system: "usage", messages: [results(first.content[0]?.id ?? "")] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-frontier-route")).toContain("failover");
    const moved = (await response.json()) as { usage: ClientUsage };
    const after = await usageAfter(before.turns + 1);
    await new Promise((r) => setTimeout(r, 100));
    const settled = await usage();
    expect(settled.turns - before.turns).toBe(1);
    expect((await failovers()) - failoversBefore).toBe(1);
    expect(after.outputTokens - before.outputTokens).toBe(moved.usage.output_tokens);

    // The authority counts a request id once, however often it is settled.
    const authority = env.TENANTS.getByName("local");
    const turn = {
      requestId: "req_repeated",
      keyId: "0123456789abcdef",
      usage: { model: "frontier-test", prefilled: 6, cached: 4, output: 2, partial: false },
    };
    expect(await authority.settle(turn)).toEqual({ counted: true });
    expect(await authority.settle(turn)).toEqual({ counted: false });
    const final = await usage();
    expect(final.turns - settled.turns).toBe(1);
    expect(final.outputTokens - settled.outputTokens).toBe(2);
    for (const url of [a, b]) {
      await call("/internal/pool/heartbeat", {
        method: "POST",
        key: null,
        body: {
          id: `w-${url}`,
          region: "local",
          url,
          boot: "b",
          model_identity: "m",
          sequences_total: 4,
          leaving: true,
        },
        headers: { authorization: `Bearer ${POOL_TOKEN}` },
      });
    }
  });
});
