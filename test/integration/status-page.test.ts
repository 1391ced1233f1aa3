/**
 * The status page in a real browser (Debian Chromium driven by playwright-core) against the real
 * stack: it asks for credentials, then shows the worker up with its model and sequences, the
 * resident session and checkpoint of a tool turn just made, the hit rate and the turn's decision.
 * The screenshot is saved to $FRONTIER_SCREENSHOT_DIR (default: the OS temp dir) as
 * frontier-status-page.png.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { postJson, randomHint } from "../support/api.ts";
import { launchChromium } from "../support/chromium.ts";

const edgeUrl = inject("edgeUrl");
/** The local development admin token (wrangler.toml holds its SHA-256). */
const ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
const SCREENSHOT = join(process.env.FRONTIER_SCREENSHOT_DIR || tmpdir(), "frontier-status-page.png");

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
}, 600_000);
afterAll(async () => {
  await browser?.close();
});

const tool = {
  name: "lookup",
  description: "Look a word up",
  input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

describe("status page", () => {
  it("refuses a browser without credentials", async () => {
    const context = await browser.newContext();
    const plain = await context.request.get(`${edgeUrl}/admin/status`);
    expect(plain.status()).toBe(401);
    expect(plain.headers()["www-authenticate"]).toContain("Basic");
    expect(await plain.text()).not.toContain("Pools and workers");
    // Headless Chromium has no one to ask for the password: the navigation fails.
    const page = await context.newPage();
    await expect(page.goto(`${edgeUrl}/admin/status`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    const wrong = await browser.newContext({ httpCredentials: { username: "admin", password: "wrong" } });
    expect((await wrong.request.get(`${edgeUrl}/admin/status.json`)).status()).toBe(401);
    await wrong.close();
    await context.close();
  });

  it("shows the pool, the worker, its sessions and checkpoints, and the latest decisions", async () => {
    // A tool turn leaves a resident session and (in the background) a tool-frontier checkpoint.
    const res = await postJson(
      `${edgeUrl}/v1/messages`,
      {
        model: "m",
        max_tokens: 64,
        temperature: 0,
        system: `status page ${randomHint()}`,
        tools: [tool],
        tool_choice: { type: "any" },
        messages: [{ role: "user", content: "Look one word up." }],
      },
      { headers: { "x-claude-code-session-id": randomHint() } },
    );
    expect(res.status).toBe(200);
    await res.json();

    const context = await browser.newContext({ httpCredentials: { username: "admin", password: ADMIN_TOKEN } });
    const page = await context.newPage();
    const response = await page.goto(`${edgeUrl}/admin/status`);
    expect(response?.status()).toBe(200);
    await page.waitForSelector("body[data-loaded=true]");
    // Counters arrive after each response: reload until the turn and its checkpoint show.
    for (let i = 0; i < 40; i++) {
      const turns = Number(await page.textContent("#turns"));
      const checkpoints = await page.textContent("#checkpoints");
      if (turns >= 1 && !checkpoints?.startsWith("0 ")) break;
      await page.waitForTimeout(250);
      await page.reload();
      await page.waitForSelector("body[data-loaded=true]");
    }
    expect(await page.textContent("#error")).toBe("");
    // The stack's one worker is a static member: the pool names it by its URL.
    const worker = page.locator("#workers tbody tr", { hasText: inject("workerHttpUrl") });
    await expect(worker.count()).resolves.toBe(1);
    const cells = await worker.locator("td").allTextContents();
    expect(cells[0]).toContain("local");
    expect(cells[2]).toBe("up");
    expect(cells[3]).toBe("yes");
    expect(cells[4]).not.toBe("–");
    expect(cells[5]).toMatch(/^\d+ \/ 4$/);
    // The engine build the worker loaded (its Health RPC), e.g. "prebuilt CPU build (llama.cpp …)".
    expect(cells[13]).toMatch(/^(prebuilt|local) (CPU|CUDA|VULKAN|METAL) build \(llama\.cpp /);
    expect(Number(await page.textContent("#sessions-resident"))).toBeGreaterThanOrEqual(1);
    expect(Number(await page.textContent("#turns"))).toBeGreaterThanOrEqual(1);
    expect(await page.textContent("#checkpoints")).toMatch(/^[1-9]\d* \(/);
    expect(await page.textContent("#hit-rate")).toMatch(/^\d+\.\d%$/);
    expect(await page.locator("#decisions tbody").textContent()).toContain("cold");
    expect(await page.locator("#misses tbody tr").count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator("#usage tbody").textContent()).toContain("local");
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    process.stdout.write(`status page screenshot: ${SCREENSHOT}\n`);
    await context.close();
  });
});
