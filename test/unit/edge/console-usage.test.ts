/** The console's usage data (edge/admin/console/usage-days.ts): its window, rows, key totals and today's sums. */
import { describe, expect, it } from "vitest";
import { keyTotals, USAGE_DAYS, usageDays, usageToday, usageWindow } from "../../../edge/admin/console/usage-days.ts";

const totals = (turns: number, costNano: number) => ({
  turns,
  inputTokens: 100 * turns,
  cachedTokens: 40 * turns,
  prefilledTokens: 60 * turns,
  outputTokens: 10 * turns,
  costNano,
});

const reports = [
  {
    tenant: "acme",
    days: [
      { day: "2026-11-01", keyId: "k1", ...totals(5, 5e9) },
      { day: "2026-12-05", keyId: "k1", ...totals(2, 1_500_000_000) },
      { day: "2026-12-06", keyId: "k1", ...totals(1, 250_000_000) },
      { day: "2026-12-06", keyId: "k2", ...totals(3, 0) },
    ],
    keys: [
      { keyId: "k1", ...totals(8, 6_750_000_000) },
      { keyId: "k2", ...totals(3, 0) },
    ],
  },
  { tenant: "archived", days: [], keys: [{ keyId: "old", ...totals(4, 1e9) }] },
];

describe("console usage data", () => {
  it("covers the last USAGE_DAYS UTC days, today included", () => {
    const now = Date.parse("2026-12-06T23:59:00Z");
    expect(usageWindow(now)).toEqual({ from: "2026-11-23", to: "2026-12-06" });
    expect(USAGE_DAYS).toBe(14);
  });

  it("keeps the window's rows per day, tenant and key, costs in currency units", () => {
    const days = usageDays(reports, { from: "2026-11-23", to: "2026-12-06" }, "eur");
    expect(days.currency).toBe("eur");
    expect(days.rows.map((r) => [r.day, r.tenant, r.keyId, r.turns, r.cost])).toEqual([
      ["2026-12-05", "acme", "k1", 2, 1.5],
      ["2026-12-06", "acme", "k1", 1, 0.25],
      ["2026-12-06", "acme", "k2", 3, 0],
    ]);
    expect(days.rows[0]).toMatchObject({ inputTokens: 200, cachedTokens: 80, outputTokens: 20 });
  });

  it("gives every key's all-time totals, archived tenants' included", () => {
    expect(keyTotals(reports).map((k) => [k.tenant, k.keyId, k.turns, k.cost])).toEqual([
      ["acme", "k1", 8, 6.75],
      ["acme", "k2", 3, 0],
      ["archived", "old", 4, 1],
    ]);
  });

  it("sums today's usage per tenant", () => {
    expect(usageToday(reports, "2026-12-06")).toEqual([
      { tenant: "acme", turns: 4, inputTokens: 400, cachedTokens: 160, outputTokens: 40 },
      { tenant: "archived", turns: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0 },
    ]);
  });
});
