/**
 * Debian's Chromium for browser tests (Playwright's own browser download cannot work offline):
 * found or installed with apt by scripts/ensure-chromium.ts, then launched headless by playwright-core.
 */
import { type Browser, chromium } from "playwright-core";
import { ensureChromium } from "../../scripts/ensure-chromium.ts";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-quic",
  "--no-first-run",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: ensureChromium(), args: FLAGS, headless: true });
}
