/**
 * Usage and cost reports (issue 44 item 4): `GET /admin/usage_report` and `/admin/cost_report`,
 * grouped by tenant, key and model in hourly or daily buckets, paged, JSON and CSV, equal to the sum
 * of the turns (what the worker reported, costed with the price table; a replayed settlement counted
 * once), archived tenants and revoked keys included; and `GET /v1/key`, where a key reads its own
 * limits, spend and remaining budget. The clock is set per turn (core/clock.ts), never slept on.
 */
import { waitForGlobalWaitUntil } from "cloudflare:test-internal";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../edge/core/clock.ts";
import { costNano, type ModelPrice } from "../../edge/tenancy/pricing.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call, messagesBody } from "./helpers.ts";
import { admin, newKey, newTenant } from "./tenancy-helpers.ts";

let fake: FakeWorker | undefined;
const realNow = clock.now;
afterEach(() => {
  fake?.restore();
  clock.now = realNow;
});

const PRICES: Record<string, { input: number; cached_input: number; output: number }> = {
  "frontier-test": { input: 2, cached_input: 0.5, output: 8 },
  "frontier-large": { input: 3.3, cached_input: 0.7, output: 13.1 },
};
const micro = (p: { input: number; cached_input: number; output: number }): ModelPrice => ({
  inputMicro: p.input * 1e6,
  cachedInputMicro: p.cached_input * 1e6,
  outputMicro: p.output * 1e6,
});

interface Turn {
  tenant: string;
  keyId: string;
  model: string;
  at: number;
  prefilled: number;
  cached: number;
  output: number;
}

/** A worker that answers each turn with the usage its request text names (`u:<prefilled>:<cached>:<output>`). */
function usageWorker(): FakeWorker {
  return installFakeWorker(async function* ({ request }) {
    const text = JSON.stringify(request.conversation?.messages ?? []);
    const [, prefilled = 0, cached = 0, output = 0] = (/u:(\d+):(\d+):(\d+)/.exec(text) ?? []).map(Number);
    const messageId = await mintId(env.ID_SECRET ?? "", "msg", request.tenantId, request.sessionId);
    yield event({ case: "prompt", value: { promptTokens: prefilled + cached, cachedTokens: cached, messageId } });
    yield event({ case: "textDelta", value: { text: "ok" } });
    yield event({
      case: "stop",
      value: {
        reason: StopReason.END_TURN,
        usage: { inputTokens: prefilled, cachedTokens: cached, outputTokens: output },
      },
    });
  });
}

/** A Messages body whose text is `text` (the usage worker reads its usage from it). */
function turnBody(text: string, model = "frontier-test"): Record<string, unknown> {
  return messagesBody({ model, max_tokens: 600, messages: [{ role: "user", content: text }] });
}

type Result = Record<string, string | number | null>;
type Report = {
  data: { starting_at: string; ending_at: string; results: Result[] }[];
  has_more: boolean;
  next_page: string | null;
};

/** Every page of a report. */
async function wholeReport(path: string, query: Record<string, string>): Promise<Report["data"]> {
  const buckets: Report["data"] = [];
  let page: string | null = null;
  do {
    const params: URLSearchParams = new URLSearchParams(page === null ? query : { ...query, page });
    const answer: { status: number; body: Report } = await admin<Report>(`${path}?${params}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    buckets.push(...answer.body.data);
    page = answer.body.next_page;
  } while (page !== null);
  return buckets;
}

const DAY0 = Date.UTC(2027, 2, 10);
const HOUR = 3_600_000;

describe("usage and cost reports", () => {
  it("equal the sum of the turns, by tenant, key and model, hourly and daily, archived tenants and revoked keys included", async () => {
    fake = usageWorker();
    clock.now = () => DAY0;
    await admin("/admin/prices", {
      method: "POST",
      body: { prices: Object.entries(PRICES).map(([model, p]) => ({ model, ...p })) },
    });
    const [a, b] = [await newTenant(), await newTenant()];
    const keys = [
      { tenant: a, ...(await newKey(a)) },
      { tenant: a, ...(await newKey(a)) },
      { tenant: b, ...(await newKey(b)) },
    ];
    // 30 turns over two days and several hours, two models, three keys of two tenants.
    const turns: Turn[] = [];
    for (let i = 0; i < 30; i++) {
      const key = keys[i % 3];
      if (!key) throw new Error("no key");
      const model = i % 4 === 0 ? "frontier-large" : "frontier-test";
      const at = DAY0 + (i % 2) * 24 * HOUR + (i % 5) * HOUR + 17 * 60_000;
      const usage = { prefilled: 40 + i * 7, cached: (i * 13) % 50, output: 5 + ((i * 11) % 37) };
      clock.now = () => at;
      const body = turnBody(`u:${usage.prefilled}:${usage.cached}:${usage.output} turn ${i}`, model);
      const response = await call("/v1/messages", { key: key.value, method: "POST", body });
      expect(response.status, await response.clone().text()).toBe(200);
      await response.arrayBuffer();
      await waitForGlobalWaitUntil(); // the settlement, at this turn's clock
      turns.push({ tenant: key.tenant, keyId: key.id, model, at, ...usage });
    }
    // A settlement replayed (an edge retrying it) counts once.
    const [replayed] = await env.TENANTS.getByName(a).usageTurns(0, Number.MAX_SAFE_INTEGER);
    if (!replayed) throw new Error("no turn recorded");
    const again = await env.TENANTS.getByName(a).settle({
      requestId: replayed.requestId,
      keyId: replayed.keyId,
      usage: { model: replayed.model, prefilled: 999, cached: 0, output: 999, partial: false },
    });
    expect(again.counted).toBe(false);
    // History survives: revoke a key, archive a tenant.
    clock.now = () => DAY0 + 3 * 24 * HOUR;
    expect((await admin(`/admin/tenants/${a}/keys/${keys[1]?.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await admin(`/admin/tenants/${b}/archive`, { method: "POST" })).status).toBe(200);

    const expected = new Map<
      string,
      { requests: number; prefilled: number; cached: number; output: number; cost: number }
    >();
    for (const t of turns) {
      for (const width of ["1h", "1d"]) {
        const size = width === "1h" ? HOUR : 24 * HOUR;
        const name = [width, new Date(Math.floor(t.at / size) * size).toISOString(), t.tenant, t.keyId, t.model].join(
          " ",
        );
        const sum = expected.get(name) ?? { requests: 0, prefilled: 0, cached: 0, output: 0, cost: 0 };
        const price = PRICES[t.model];
        if (!price) throw new Error("no price");
        sum.requests++;
        sum.prefilled += t.prefilled;
        sum.cached += t.cached;
        sum.output += t.output;
        sum.cost += costNano(micro(price), t);
        expected.set(name, sum);
      }
    }
    const base = {
      starting_at: new Date(DAY0).toISOString(),
      ending_at: new Date(DAY0 + 2 * 24 * HOUR).toISOString(),
      group_by: "tenant_id,api_key_id,model",
      tenant_ids: `${a},${b}`,
    };
    for (const width of ["1h", "1d"]) {
      const query = { ...base, bucket_width: width, limit: width === "1h" ? "5" : "1" };
      const [usage, cost] = [
        await wholeReport("/admin/usage_report", query),
        await wholeReport("/admin/cost_report", query),
      ];
      expect(usage).toHaveLength(width === "1h" ? 48 : 2); // every bucket, empty ones too, over several pages
      const got = new Map<
        string,
        { requests: number; prefilled: number; cached: number; output: number; cost: number }
      >();
      for (const bucket of usage) {
        for (const r of bucket.results) {
          got.set([width, bucket.starting_at, r.tenant_id, r.api_key_id, r.model].join(" "), {
            requests: Number(r.requests),
            prefilled: Number(r.uncached_input_tokens),
            cached: Number(r.cache_read_input_tokens),
            output: Number(r.output_tokens),
            cost: 0,
          });
          expect(r.input_tokens).toBe(Number(r.uncached_input_tokens) + Number(r.cache_read_input_tokens));
        }
      }
      for (const bucket of cost) {
        for (const r of bucket.results) {
          const name = [width, bucket.starting_at, r.tenant_id, r.api_key_id, r.model].join(" ");
          const row = got.get(name);
          if (!row) throw new Error(`a cost row without usage: ${name}`);
          row.cost = Number(r.amount_nano);
          expect(r.amount).toBeCloseTo(Number(r.amount_nano) / 1e9, 9);
          expect(r.currency).toBe("usd");
        }
      }
      const want = new Map([...expected].filter(([name]) => name.startsWith(`${width} `)));
      expect(got).toEqual(want);
    }
    const totalCost = [...expected].filter(([n]) => n.startsWith("1d ")).reduce((s, [, v]) => s + v.cost, 0);
    const totalTokens = turns.reduce((s, t) => s + t.prefilled + t.cached + t.output, 0);
    console.log(
      `reports: ${turns.length} turns (${totalTokens} tokens, ${totalCost / 1e9} usd) equal the usage and cost ` +
        "reports per tenant, key, model and bucket (1h and 1d), a replayed settlement counted once, after a key " +
        "was revoked and a tenant archived",
    );
  });

  it("groups, filters and answers as CSV; refuses bad queries and other tenants' admins", async () => {
    fake = usageWorker();
    clock.now = () => DAY0 + 5 * HOUR;
    const tenant = await newTenant();
    const key = await newKey(tenant);
    for (const u of ["u:10:2:3", "u:20:4:5"]) {
      await (await call("/v1/messages", { key: key.value, method: "POST", body: turnBody(u) })).arrayBuffer();
      await waitForGlobalWaitUntil();
    }
    const query = `starting_at=2027-03-10&ending_at=2027-03-11&tenant_ids=${tenant}`;
    const total = await admin<Report>(`/admin/usage_report?${query}`);
    expect(total.body.data).toEqual([
      {
        starting_at: "2027-03-10T00:00:00.000Z",
        ending_at: "2027-03-11T00:00:00.000Z",
        results: [
          {
            tenant_id: null,
            api_key_id: null,
            model: null,
            requests: 2,
            uncached_input_tokens: 30,
            cache_read_input_tokens: 6,
            input_tokens: 36,
            output_tokens: 8,
          },
        ],
      },
    ]);
    const csv = await call(`/admin/usage_report?${query}&group_by[]=api_key_id&format=csv`, {
      key: "frontier-dev-admin-token-change-me",
      bearer: true,
    });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    expect(await csv.text()).toBe(
      "starting_at,ending_at,tenant_id,api_key_id,model,requests,uncached_input_tokens,cache_read_input_tokens,input_tokens,output_tokens\n" +
        `2027-03-10T00:00:00.000Z,2027-03-11T00:00:00.000Z,,${key.id},,2,30,6,36,8\n`,
    );
    const paged = await call(`/admin/usage_report?${query.replace("2027-03-11", "2027-03-12")}&limit=1&format=csv`, {
      key: "frontier-dev-admin-token-change-me",
      bearer: true,
    });
    expect(paged.headers.get("link")).toContain("page=2027-03-11T00%3A00%3A00.000Z");
    const other = await admin<Report>(`/admin/usage_report?${query}&models=frontier-large`);
    expect(other.body.data[0]?.results).toEqual([]);
    for (const bad of [
      "",
      "starting_at=nope",
      `${query}&bucket_width=1m`,
      `${query}&group_by=workspace`,
      `${query}&limit=99`,
    ]) {
      expect((await admin(`/admin/usage_report?${bad}`)).status, bad).toBe(400);
    }
    const own = await admin<{ value: string }>("/admin/admin-keys", {
      method: "POST",
      body: { name: "self-serve", scopes: ["read"], tenant_id: tenant },
    });
    const token = own.body.value;
    expect((await admin(`/admin/cost_report?${query}`, { token })).status).toBe(200);
    const elsewhere = await admin(`/admin/cost_report?starting_at=2027-03-10&tenant_ids=someone-else`, { token });
    expect(elsewhere.status).toBe(403);
  });
});

describe("GET /v1/key", () => {
  it("shows a key its own limits, spend and remaining budget, and refuses it once revoked", async () => {
    fake = usageWorker();
    clock.now = () => DAY0 + 5 * HOUR;
    await admin("/admin/prices", {
      method: "POST",
      body: { prices: [{ model: "frontier-test", ...PRICES["frontier-test"] }] },
    });
    const tenant = await newTenant({ budget: { amount: 10, period: "month" }, limits: { requests_per_minute: 100 } });
    const key = await newKey(tenant, {
      name: "ci",
      budget: { amount: 1, period: "day" },
      limits: { tokens_per_minute: 50_000 },
      models: ["frontier-test"],
    });
    await (
      await call("/v1/messages", { key: key.value, method: "POST", body: turnBody("u:1000:0:500") })
    ).arrayBuffer();
    await waitForGlobalWaitUntil();
    const spent = costNano(micro(PRICES["frontier-test"] ?? { input: 0, cached_input: 0, output: 0 }), {
      prefilled: 1000,
      cached: 0,
      output: 500,
    });
    const response = await call("/v1/key", { key: key.value, bearer: true });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ratelimit-limit-requests")).toBe("100");
    const { data } = (await response.json()) as { data: Record<string, unknown> };
    expect(data).toMatchObject({
      id: key.id,
      tenant_id: tenant,
      name: "ci",
      status: "active",
      source: "runtime",
      currency: "usd",
      limit: 1,
      limit_reset: "day",
      limit_remaining: 1 - spent / 1e9,
      usage: spent / 1e9,
      usage_daily: spent / 1e9,
      usage_monthly: spent / 1e9,
      models: ["frontier-test"],
      rate_limit: { requests_per_minute: null, tokens_per_minute: 50_000, concurrent_requests: null },
      tenant: {
        rate_limit: { requests_per_minute: 100 },
        limit: 10,
        limit_reset: "month",
        limit_remaining: 10 - spent / 1e9,
      },
    });
    await admin(`/admin/tenants/${tenant}/keys/${key.id}`, { method: "DELETE" });
    const refused = await call("/v1/key", { key: key.value });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toBe(
      "This API key has been revoked",
    );
  });
});
