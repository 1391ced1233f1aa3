/**
 * Limits hold under concurrency (issue 44 item 3), fuzzed: many parallel streams and JSON turns of a
 * tenant's keys, in the three protocols, launched in random batches while a gated fake worker holds
 * the admitted ones and releases them in random order (some streams are cancelled by their client
 * mid-turn and billed what they used). Nothing waits for time: the driver waits for quiescence
 * (every request either answered or parked at the worker), both sides reading shared state on the
 * next timer turn (workerd forbids resolving one request's promises from another), and the clock is
 * frozen, so no bucket refills and every bound is exact. Checked per round: concurrency at the worker never passes the tenant's or a key's
 * limit; admitted requests never pass requests per minute; settled tokens never pass tokens per
 * minute; spend never passes the tenant's or a key's budget (no hosted tools: the documented excess
 * is zero); and the ledger equals, turn by turn, what the worker reported.
 */
import { waitForGlobalWaitUntil } from "cloudflare:test-internal";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { clock } from "../../edge/core/clock.ts";
import { costNano, type ModelPrice } from "../../edge/tenancy/pricing.ts";
import { promptTokenBound } from "../../edge/tenancy/turn-demand.ts";
import { StopReason } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type IdKind, mintId } from "../../shared/ids.ts";
import { event, type FakeWorker, installFakeWorker } from "./fake-worker.ts";
import { call } from "./helpers.ts";
import { admin, newKey, newTenant } from "./tenancy-helpers.ts";

let fake: FakeWorker | undefined;
const realNow = clock.now;
afterEach(() => {
  fake?.restore();
  clock.now = realNow;
});

const PRICE = { input: 2, cached_input: 0.5, output: 8 };
const PRICE_MICRO: ModelPrice = { inputMicro: 2e6, cachedInputMicro: 0.5e6, outputMicro: 8e6 };

/** mulberry32: a small seeded generator, so a failing round can be replayed. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n) };
}

function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

interface Round {
  seed: number;
  requests: number;
  tenant: { requests_per_minute?: number; tokens_per_minute?: number; concurrent_requests?: number; budget?: number };
  key: { requests_per_minute?: number; concurrent_requests?: number; budget?: number };
  keys: number;
}

interface Used {
  key: number;
  prefilled: number;
  cached: number;
  output: number;
}

/** A short timer: where each side looks again at the state the other changed. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 2));

/** What the driver waits on: requests answered, turns parked at the worker (released by a flag). */
class Quiet {
  launched = 0;
  finished = 0;
  parked = new Map<string, { key: number; released: boolean }>();
  /** Turns at the worker not released yet. */
  waiting(): { key: number; released: boolean }[] {
    return [...this.parked.values()].filter((gate) => !gate.released);
  }
  /** Every request answered or held at the worker (a released one is on its way to answered). */
  async settled(): Promise<void> {
    while (this.finished + this.waiting().length < this.launched) await nextTurn();
  }
}

async function runRound(round: Round) {
  clock.now = () => Date.UTC(2027, 5, 1, 12, 0, 0);
  const rng = random(round.seed);
  const limits = (l: { requests_per_minute?: number; tokens_per_minute?: number; concurrent_requests?: number }) => ({
    requests_per_minute: l.requests_per_minute ?? 0,
    tokens_per_minute: l.tokens_per_minute ?? 0,
    concurrent_requests: l.concurrent_requests ?? 0,
  });
  const budget = (amount: number | undefined) => (amount === undefined ? null : { amount, period: "day" });
  const tenant = await newTenant({ limits: limits(round.tenant), budget: budget(round.tenant.budget) });
  const keys: string[] = [];
  for (let i = 0; i < round.keys; i++) {
    keys.push((await newKey(tenant, { limits: limits(round.key), budget: budget(round.key.budget) })).value);
  }

  const quiet = new Quiet();
  const used = new Map<string, Used>();
  const live = { tenant: 0, keys: new Map<number, number>(), maxTenant: 0, maxKey: 0 };
  fake = installFakeWorker(async function* ({ request, signal }) {
    const key = Number(/key-(\d+)/.exec(JSON.stringify(request.conversation?.messages ?? []))?.[1] ?? -1);
    live.tenant++;
    live.keys.set(key, (live.keys.get(key) ?? 0) + 1);
    live.maxTenant = Math.max(live.maxTenant, live.tenant);
    live.maxKey = Math.max(live.maxKey, live.keys.get(key) ?? 0);
    try {
      // The turn's own numbers, from its text (the same whatever order the turns arrive in).
      const own = random(hashOf(JSON.stringify(request.conversation?.messages ?? [])));
      const bound = promptTokenBound(request.conversation);
      // Near the bound (90-100 % of it): what makes an overspend show if reservations were not counted.
      const prompt = bound - own.int(Math.ceil(bound / 10));
      const cached = own.int(Math.ceil(prompt / 4));
      const prefilled = prompt - cached;
      const maxTokens = request.sampling?.maxTokens ?? 0;
      const output = maxTokens - own.int(Math.ceil(maxTokens / 10));
      const kind = (request.idKinds?.message ?? "msg") as IdKind;
      const messageId = await mintId(env.ID_SECRET ?? "", kind, request.tenantId, request.sessionId);
      yield event({ case: "prompt", value: { promptTokens: prompt, cachedTokens: cached, messageId } });
      // Parked until the driver releases it, or its client goes away (billed its prompt, no output).
      used.set(request.requestId, { key, prefilled, cached, output: 0 });
      const gate = { key, released: false };
      quiet.parked.set(request.requestId, gate);
      // Parked as a busy worker is: alive (a keep-alive every ~0.5 s, like the real worker's, so the edge's
      // idle deadline does not take it for frozen however long the driver holds it), producing nothing.
      let alive = Date.now();
      while (!gate.released && !signal.aborted) {
        await nextTurn();
        if (Date.now() - alive < 500) continue;
        alive = Date.now();
        yield event({ case: "keepAlive", value: { prefilledTokens: prompt, totalTokens: prompt } });
      }
      quiet.parked.delete(request.requestId);
      if (!gate.released) return;
      used.set(request.requestId, { key, prefilled, cached, output });
      yield event({ case: "textDelta", value: { text: "x" } });
      const usage = { inputTokens: prefilled, cachedTokens: cached, outputTokens: output };
      yield event({ case: "stop", value: { reason: StopReason.END_TURN, usage } });
    } finally {
      live.tenant--;
      live.keys.set(key, (live.keys.get(key) ?? 1) - 1);
    }
  });

  const outcomes: { key: number; status: number; retryAfter: number | null }[] = [];
  const launch = async (n: number) => {
    const key = rng.int(keys.length);
    const maxTokens = 16 + rng.int(400);
    const stream = rng.next() < 0.6;
    const cancel = stream && rng.next() < 0.15;
    const text = `key-${key} request ${n} ${"words ".repeat(rng.int(40))}`;
    const protocol = rng.int(3);
    const request =
      protocol === 0
        ? call("/v1/messages", {
            key: keys[key],
            method: "POST",
            body: {
              model: "frontier-test",
              max_tokens: maxTokens,
              stream,
              messages: [{ role: "user", content: text }],
            },
          })
        : protocol === 1
          ? call("/v1/responses", {
              key: keys[key],
              bearer: true,
              method: "POST",
              body: { model: "frontier-test", max_output_tokens: maxTokens, stream, store: false, input: text },
            })
          : call("/v1/chat/completions", {
              key: keys[key],
              bearer: true,
              method: "POST",
              body: {
                model: "frontier-test",
                max_tokens: maxTokens,
                stream,
                messages: [{ role: "user", content: text }],
              },
            });
    const response = await request;
    outcomes.push({ key, status: response.status, retryAfter: Number(response.headers.get("retry-after")) || null });
    if (cancel && response.status === 200 && response.body) {
      const reader = response.body.getReader();
      await reader.read();
      await reader.cancel();
    } else {
      await response.arrayBuffer();
    }
    quiet.finished++;
  };

  const all: Promise<void>[] = [];
  while (quiet.launched < round.requests || quiet.waiting().length > 0) {
    for (let i = 1 + rng.int(8); i > 0 && quiet.launched < round.requests; i--) {
      quiet.launched++;
      all.push(launch(quiet.launched));
    }
    await quiet.settled();
    const parked = quiet.waiting();
    const release = quiet.launched >= round.requests ? parked.length : rng.int(parked.length + 1);
    for (let i = 0; i < release; i++) {
      const gate = parked.splice(rng.int(parked.length), 1)[0];
      if (gate) gate.released = true;
    }
    await quiet.settled();
  }
  await Promise.all(all);
  await waitForGlobalWaitUntil();

  // What the ledger holds, against what the worker reported.
  const hours = await env.TENANTS.getByName(tenant).usageHours(0, Number.MAX_SAFE_INTEGER);
  const ledger = { turns: 0, prefilled: 0, cached: 0, output: 0, cost: 0 };
  const keyCost = new Map<string, number>();
  for (const h of hours) {
    ledger.turns += h.turns;
    ledger.prefilled += h.prefilledTokens;
    ledger.cached += h.cachedTokens;
    ledger.output += h.outputTokens;
    ledger.cost += h.costNano;
    keyCost.set(h.keyId, (keyCost.get(h.keyId) ?? 0) + h.costNano);
  }
  const reported = { turns: used.size, prefilled: 0, cached: 0, output: 0, cost: 0 };
  for (const u of used.values()) {
    reported.prefilled += u.prefilled;
    reported.cached += u.cached;
    reported.output += u.output;
    reported.cost += costNano(PRICE_MICRO, u);
  }
  return { tenant, outcomes, live, ledger, reported, keyCost };
}

const ROUNDS: Round[] = [
  // A budget binds: a tenant's 0.03 a day, and keys of 0.012.
  {
    seed: 1,
    requests: 60,
    keys: 3,
    tenant: { budget: 0.03, concurrent_requests: 12 },
    key: { budget: 0.012, concurrent_requests: 6 },
  },
  // Tokens per minute bind.
  { seed: 2, requests: 60, keys: 3, tenant: { tokens_per_minute: 12_000, concurrent_requests: 8 }, key: {} },
  // Everything at once, more keys.
  {
    seed: 3,
    requests: 80,
    keys: 4,
    tenant: { requests_per_minute: 60, tokens_per_minute: 30_000, concurrent_requests: 5, budget: 0.04 },
    key: { requests_per_minute: 20, concurrent_requests: 2, budget: 0.015 },
  },
];

describe("limits under concurrency (fuzzed)", () => {
  it.each(ROUNDS)(
    "round $seed: no limit passes, and the ledger is the sum of the turns",
    { timeout: 120_000 },
    async (round) => {
      await admin("/admin/prices", { method: "POST", body: { prices: [{ model: "frontier-test", ...PRICE }] } });
      const { tenant, outcomes, live, ledger, reported, keyCost } = await runRound(round);
      const admitted = outcomes.filter((o) => o.status === 200);
      const refused = outcomes.filter((o) => o.status === 429);
      expect(admitted.length + refused.length).toBe(round.requests);
      expect(refused.every((o) => (o.retryAfter ?? 0) >= 1)).toBe(true);
      expect(admitted.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      const nano = (units: number | undefined) =>
        units === undefined ? Number.POSITIVE_INFINITY : Math.round(units * 1e9);

      expect(live.maxTenant).toBeLessThanOrEqual(round.tenant.concurrent_requests ?? Number.POSITIVE_INFINITY);
      expect(live.maxKey).toBeLessThanOrEqual(round.key.concurrent_requests ?? Number.POSITIVE_INFINITY);
      expect(admitted.length).toBeLessThanOrEqual(round.tenant.requests_per_minute ?? Number.POSITIVE_INFINITY);
      for (let k = 0; k < round.keys; k++) {
        expect(admitted.filter((o) => o.key === k).length).toBeLessThanOrEqual(
          round.key.requests_per_minute ?? Number.POSITIVE_INFINITY,
        );
      }
      expect(ledger.prefilled + ledger.output).toBeLessThanOrEqual(
        round.tenant.tokens_per_minute ?? Number.POSITIVE_INFINITY,
      );
      expect(ledger.cost).toBeLessThanOrEqual(nano(round.tenant.budget));
      for (const cost of keyCost.values()) expect(cost).toBeLessThanOrEqual(nano(round.key.budget));
      expect(ledger).toEqual(reported);
      // The admin API shows the same spend for the budget's period.
      const shown = await admin<{ spend: { amount: number } | null }>(`/admin/tenants/${tenant}`);
      if (round.tenant.budget !== undefined) expect(shown.body.spend?.amount).toBeCloseTo(ledger.cost / 1e9, 9);
      console.log(
        `fuzz round ${round.seed}: ${round.requests} requests, ${admitted.length} admitted, ${refused.length} refused (429), ` +
          `${ledger.turns} turns billed; max in flight ${live.maxTenant} (tenant limit ${round.tenant.concurrent_requests ?? "-"}), ` +
          `${live.maxKey} per key (limit ${round.key.concurrent_requests ?? "-"}); tokens ${ledger.prefilled + ledger.output} of ` +
          `${round.tenant.tokens_per_minute ?? "-"}/min; spend ${ledger.cost / 1e9} of budget ${round.tenant.budget ?? "-"} ` +
          `(keys ${[...keyCost.values()].map((c) => c / 1e9).join(", ")} of ${round.key.budget ?? "-"})`,
      );
    },
  );
});
