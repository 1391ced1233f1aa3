/**
 * The console (docs/operations/console.md) in a real browser — Debian's Chromium driven by
 * playwright-core (scripts/ensure-chromium.ts) — against the e2e stack (the edge in workerd, a real
 * worker). One operator flow: sign in, type the admin token, create a tenant, issue a key (its secret
 * shown once), make a real request with it (the Anthropic SDK), see it in the key's last use, the
 * tenant's usage and the day's chart bars, revoke it, and see the next request refused. Every wait is
 * on the page's state, never a sleep. The console's screenshot is saved to
 * $FRONTIER_SCREENSHOT_DIR (default: the OS temp dir) as frontier-console.png.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { DEV_ADMIN_TOKEN } from "../../shared/dev-secrets.ts";
import { launchChromium } from "../support/chromium.ts";

const edgeUrl = inject("edgeUrl");
const SCREENSHOT = join(process.env.FRONTIER_SCREENSHOT_DIR || tmpdir(), "frontier-console.png");
const WAIT = { timeout: 60_000, polling: 200 };

let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every answer the page received from the edge: url, method and body. */
const bodies: Promise<{ url: string; method: string; body: string }>[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  context = await browser.newContext({
    httpCredentials: { username: "operator", password: DEV_ADMIN_TOKEN },
    viewport: { width: 1800, height: 1000 },
  });
  page = await context.newPage();
  page.on("dialog", (dialog) => void dialog.accept());
  page.on("response", (response) => {
    const method = response.request().method();
    bodies.push(
      response.text().then(
        (body) => ({ url: response.url(), method, body }),
        () => ({ url: "", method, body: "" }),
      ),
    );
  });
}, 600_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
});

/** The text of a key row's cells (by column header). */
async function keyCells(keyId: string): Promise<Record<string, string>> {
  return page.evaluate((id) => {
    const headers = [...document.querySelectorAll("#keys thead th")].map((th) => th.textContent ?? "");
    const row = document.querySelector(`#keys tbody tr[data-key="${id}"]`) as HTMLTableRowElement | null;
    const cells = row ? [...row.cells].map((td) => td.textContent ?? "") : [];
    return Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? ""]));
  }, keyId);
}

describe("console", () => {
  it("creates a tenant, issues a key, shows it used, revokes it", async () => {
    const tenant = `console-${crypto.randomUUID().slice(0, 8)}`;
    const model = `console-model-${tenant}`;
    // A price for this test's own model name, so the turn has a cost (no other test's turns change).
    const priced = await fetch(`${edgeUrl}/admin/prices`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEV_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ prices: [{ model, input: 3, cached_input: 0.3, output: 15 }] }),
    });
    expect(priced.status).toBe(200);

    expect((await page.goto(`${edgeUrl}/admin/status`))?.status()).toBe(200);
    await page.waitForSelector("body[data-console]");
    // The browser's Basic credentials read, but never change: a change needs the Bearer token.
    const ambient = await page.evaluate(async () => {
      const r = await fetch("tenants", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"name":"x"}',
      });
      return r.status;
    });
    expect(ambient).toBe(401);

    // Create the tenant: without the token the console says what it needs; with it, the tenant is listed and selected.
    await page.fill("#create-tenant input[name=id]", tenant);
    await page.fill("#create-tenant input[name=name]", "Console Test Corp");
    await page.click("#create-tenant button[type=submit]");
    await page.locator("#console-error", { hasText: "Type the admin token" }).waitFor();
    await page.fill("#admin-token", DEV_ADMIN_TOKEN);
    await page.click("#create-tenant button[type=submit]");
    await page.locator("#tenants tbody tr.selected", { hasText: tenant }).waitFor();
    await page.locator("#keys-tenant", { hasText: tenant }).waitFor();
    expect(await page.textContent("#console-note")).toBe(`Tenant ${tenant} created`);

    // Issue a key with a limit: its secret is shown once.
    await page.fill("#issue-key input[name=name]", "ci");
    await page.fill("#issue-key input[name=requests_per_minute]", "60");
    await page.click("#issue-key button[type=submit]");
    await page.waitForSelector("#new-secret:not([hidden])");
    const secret = (await page.textContent("#new-secret-value")) ?? "";
    expect(secret).toMatch(new RegExp(`^sk-fr-${tenant}-[a-z2-7]{12}-`));
    const keyId = secret.slice(`sk-fr-${tenant}-`.length).slice(0, 12);
    await page.waitForSelector(`#keys tbody tr[data-key="${keyId}"]`);
    const issued = await keyCells(keyId);
    expect(issued).toMatchObject({ name: "ci", status: "active", "last used": "never", limits: "60 requests / min" });
    expect(issued.key).toMatch(new RegExp(`^sk-fr-${tenant}-${keyId}-…`));
    await page.click("#new-secret-done");
    expect(await page.content()).not.toContain(secret);

    // One real request with the key, through the stack.
    const client = new Anthropic({ baseURL: edgeUrl, apiKey: secret, maxRetries: 0 });
    const message = await client.messages.create({
      model,
      max_tokens: 16,
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const today = new Date().toISOString().slice(0, 10);
    // The page refreshes itself every 5 s: wait until the key's use and its cost show.
    await page.waitForFunction(
      ([id, day]) => {
        const row = document.querySelector(`#keys tbody tr[data-key="${id}"]`) as HTMLTableRowElement | null;
        const cost = document.querySelector(`#cost-chart rect[data-day="${day}"]`);
        return (
          row?.cells[10]?.textContent === "1" &&
          row.cells[5]?.textContent !== "never" &&
          Number(cost?.getAttribute("data-value")) > 0
        );
      },
      [keyId, today] as const,
      WAIT,
    );
    await page.selectOption("#chart-tenant", tenant);
    const used = await keyCells(keyId);
    expect(used["last used"]).toMatch(new RegExp(`^${today} \\d{2}:\\d{2} UTC$`));
    expect(used["tokens in / out"]).toBe(`${message.usage.input_tokens} / ${message.usage.output_tokens}`);
    expect(Number(used.cost)).toBeGreaterThan(0);
    const bar = async (chart: string, series: string) =>
      Number(await page.getAttribute(`#${chart} rect[data-day="${today}"][data-series="${series}"]`, "data-value"));
    expect(await bar("tokens-chart", "output")).toBe(message.usage.output_tokens);
    expect(await bar("cost-chart", "cost")).toBeCloseTo(Number(used.cost), 2);
    const tenantRow = await page.locator("#tenants tbody tr", { hasText: tenant }).locator("td").allTextContents();
    expect(tenantRow.slice(0, 3)).toEqual([tenant, "Console Test Corp", "active"]);
    expect(tenantRow[5]).toBe("1");
    await page.locator("#console").screenshot({ path: SCREENSHOT });
    process.stdout.write(`console screenshot: ${SCREENSHOT}\n`);

    // Revoke it: the row says so, and the next request with the key is refused.
    await page.click(`#keys tbody tr[data-key="${keyId}"] button`);
    await page.waitForFunction(
      (id) => document.querySelector(`#keys tbody tr[data-key="${id}"]`)?.textContent?.includes("revoked"),
      keyId,
      WAIT,
    );
    expect((await keyCells(keyId)).status).toBe("revoked");
    expect(await page.textContent("#console-note")).toBe("Key ci revoked");
    const refused = await client.messages
      .create({ model, max_tokens: 16, messages: [{ role: "user", content: "Hi again" }] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((refused as InstanceType<typeof Anthropic.AuthenticationError>).message).toMatch(/revoked/);

    // The secret came from the edge exactly once (the answer that issued it), and a reload shows it nowhere.
    await page.reload();
    await page.waitForSelector("body[data-console]");
    expect(await page.content()).not.toContain(secret);
    const seen = (await Promise.all(bodies)).filter((b) => b.body.includes(secret));
    expect(seen.map((b) => `${b.method} ${new URL(b.url).pathname}`)).toEqual([`POST /admin/tenants/${tenant}/keys`]);
  });
});
