/**
 * The authority's admission logic on its own (edge/tenancy/authority/admission-book.ts and the pure
 * pieces around it): buckets, reservations and their settlement, budgets with what is in flight,
 * budget periods, prices and the prompt bound; plus a randomized check that reservations keep the
 * charged total under a budget whatever order turns are admitted and settled in.
 */
import { describe, expect, it } from "vitest";
import { duration } from "../../../edge/protocols/openai/rate-limit-headers.ts";
import { AdmissionBook, type AdmissionScope, type Demand } from "../../../edge/tenancy/authority/admission-book.ts";
import { periodEnd, periodStart, type ScopeLimits } from "../../../edge/tenancy/authority/policy.ts";
import { boundNano, costNano } from "../../../edge/tenancy/pricing.ts";
import { promptTokenBound, utf8Bytes } from "../../../edge/tenancy/turn-demand.ts";

const NOW = Date.UTC(2027, 2, 10, 10, 0, 0);
const none: ScopeLimits = { rpm: 0, tpm: 0, concurrent: 0, budget: null };
const scope = (limits: Partial<ScopeLimits>, spentNano = 0, id = "tenant"): AdmissionScope => ({
  id,
  limits: { ...none, ...limits },
  spentNano,
});
let next = 0;
const demand = (tokens = 0, costNano = 0): Demand => ({
  requestId: `r${next++}`,
  keyId: "k",
  tokens,
  costNano,
  model: "m",
});

describe("AdmissionBook", () => {
  it("counts requests in flight until they are released", () => {
    const book = new AdmissionBook();
    const scopes = [scope({ concurrent: 2 })];
    const [a, b] = [demand(), demand()];
    expect(book.admit(NOW, scopes, a)).toBeUndefined();
    expect(book.admit(NOW, scopes, b)).toBeUndefined();
    expect(book.admit(NOW, scopes, demand())).toMatchObject({ reason: "concurrency", limit: 2, retryAfterS: 1 });
    expect(book.release(a.requestId)).toMatchObject({ requestId: a.requestId });
    expect(book.release(a.requestId)).toBeUndefined();
    expect(book.admit(NOW, scopes, demand())).toBeUndefined();
  });

  it("refills requests per minute continuously and says when the next one fits", () => {
    const book = new AdmissionBook();
    const scopes = [scope({ rpm: 6 })];
    for (let i = 0; i < 6; i++) expect(book.admit(NOW, scopes, demand())).toBeUndefined();
    expect(book.admit(NOW, scopes, demand())).toMatchObject({ reason: "requests", retryAfterS: 10 });
    expect(book.snapshot(NOW, scopes).requests).toEqual({ limit: 6, remaining: 0, resetAt: NOW + 60_000 });
    expect(book.admit(NOW + 9_999, scopes, demand())).toMatchObject({ reason: "requests" });
    expect(book.admit(NOW + 10_000, scopes, demand())).toBeUndefined();
  });

  it("reserves tokens at admission and settles what was used; a demand larger than the bucket needs it full", () => {
    const book = new AdmissionBook();
    const scopes = [scope({ tpm: 1000 })];
    const a = demand(800);
    expect(book.admit(NOW, scopes, a)).toBeUndefined();
    expect(book.admit(NOW, scopes, demand(300))).toMatchObject({ reason: "tokens", retryAfterS: 6 });
    book.release(a.requestId);
    book.chargeTokens(NOW, scopes, 800, 100);
    expect(book.snapshot(NOW, scopes).tokens?.remaining).toBe(900);
    expect(book.admit(NOW, scopes, demand(2000))).toMatchObject({ reason: "tokens" });
    expect(book.admit(NOW + 6_000, scopes, demand(2000))).toBeUndefined();
    expect(book.snapshot(NOW + 6_000, scopes).tokens?.remaining).toBe(0);
  });

  it("refuses a budget's overspend counting what turns in flight reserved, and retries at the period's end once spent", () => {
    const budget = { amountNano: 1000, period: "day" as const };
    const book = new AdmissionBook();
    const a = demand(0, 600);
    expect(book.admit(NOW, [scope({ budget })], a)).toBeUndefined();
    // 600 reserved: another 500 does not fit now, but may once `a` settles lower.
    expect(book.admit(NOW, [scope({ budget })], demand(0, 500))).toMatchObject({ reason: "budget", retryAfterS: 1 });
    book.release(a.requestId);
    // Spent 700 (settled): 400 more can never fit this period.
    expect(book.admit(NOW, [scope({ budget }, 700)], demand(0, 400))).toMatchObject({
      reason: "budget",
      retryAfterS: 14 * 3600,
    });
    expect(book.preflight(NOW, [scope({ budget }, 1000)])).toMatchObject({ reason: "budget" });
    expect(book.preflight(NOW, [scope({ budget }, 999)])).toBeUndefined();
  });

  it("takes nothing from any scope when one refuses", () => {
    const book = new AdmissionBook();
    const scopes = [scope({ rpm: 10, tpm: 1000 }), scope({ rpm: 1 }, 0, "key:k")];
    expect(book.admit(NOW, scopes, demand(100))).toBeUndefined();
    expect(book.admit(NOW, scopes, demand(100))).toMatchObject({ reason: "requests", scope: "key:k" });
    const snapshot = book.snapshot(NOW, scopes);
    expect(snapshot.requests?.remaining).toBe(0);
    expect(snapshot.tokens?.remaining).toBe(900);
    expect(book.snapshot(NOW, [scopes[0] as AdmissionScope]).requests?.remaining).toBe(9);
  });

  it("forgets a reservation whose request never settled, after its lease", () => {
    const book = new AdmissionBook();
    const scopes = [scope({ concurrent: 1 })];
    expect(book.admit(NOW, scopes, demand())).toBeUndefined();
    expect(book.admit(NOW + 15 * 60_000, scopes, demand())).toMatchObject({ reason: "concurrency" });
    expect(book.admit(NOW + 15 * 60_000 + 1, scopes, demand())).toBeUndefined();
  });

  it("keeps the charged total under a budget, whatever order random turns are admitted and settled in", () => {
    for (let seed = 1; seed <= 200; seed++) {
      let s = seed;
      const rand = (n: number) => {
        s = (s * 1103515245 + 12345) % 2147483648;
        return s % n;
      };
      const budget = { amountNano: 10_000, period: "month" as const };
      const book = new AdmissionBook(seed % 2 === 0 ? undefined : new AdmissionBook().state());
      let spent = 0;
      const inFlight: Demand[] = [];
      for (let step = 0; step < 300; step++) {
        if (rand(3) > 0 || inFlight.length === 0) {
          const d = demand(0, 1 + rand(3000));
          if (book.admit(NOW, [scope({ budget }, spent)], d) === undefined) inFlight.push(d);
        } else {
          const [d] = inFlight.splice(rand(inFlight.length), 1);
          if (!d) continue;
          book.release(d.requestId);
          spent += rand(d.costNano + 1); // a turn costs at most what it reserved
        }
        expect(spent + book.reservedNano("tenant")).toBeLessThanOrEqual(budget.amountNano);
      }
    }
  });
});

describe("budget periods, prices and bounds", () => {
  it("starts days, weeks (Monday) and months at 00:00 UTC", () => {
    const wednesday = Date.UTC(2027, 2, 10, 13, 5);
    expect(new Date(periodStart("day", wednesday)).toISOString()).toBe("2027-03-10T00:00:00.000Z");
    expect(new Date(periodStart("week", wednesday)).toISOString()).toBe("2027-03-08T00:00:00.000Z");
    expect(new Date(periodStart("month", wednesday)).toISOString()).toBe("2027-03-01T00:00:00.000Z");
    expect(new Date(periodEnd("week", wednesday)).toISOString()).toBe("2027-03-15T00:00:00.000Z");
    expect(new Date(periodEnd("month", Date.UTC(2027, 11, 31, 23))).toISOString()).toBe("2028-01-01T00:00:00.000Z");
    const sunday = Date.UTC(2027, 2, 14, 23, 59);
    expect(new Date(periodStart("week", sunday)).toISOString()).toBe("2027-03-08T00:00:00.000Z");
  });

  it("costs usage in nano-units and bounds a turn with every prompt token at the dearer input price", () => {
    const price = { inputMicro: 3_000_000, cachedInputMicro: 300_000, outputMicro: 15_000_000 };
    // 1000 prefilled at 3, 2000 cached at 0.3, 100 output at 15 per million.
    expect(costNano(price, { prefilled: 1000, cached: 2000, output: 100 })).toBe(3_000_000 + 600_000 + 1_500_000);
    expect(boundNano(price, 3000, 100)).toBe(9_000_000 + 1_500_000);
    expect(costNano(undefined, { prefilled: 1, cached: 1, output: 1 })).toBe(0);
  });

  it("bounds a prompt's tokens by its UTF-8 bytes, with room for the template", () => {
    expect(utf8Bytes({ a: "é", b: ["日本", new Uint8Array(3)], $typeName: "ignored" })).toBe(2 + 6 + 3);
    expect(utf8Bytes("😀")).toBe(4);
    const small = promptTokenBound(undefined);
    expect(small).toBe(512);
  });

  it("writes OpenAI's reset durations", () => {
    expect([duration(0), duration(20), duration(1500), duration(60_000), duration(90_500)]).toEqual([
      "0s",
      "20ms",
      "1.5s",
      "1m0s",
      "1m30.5s",
    ]);
  });
});
