/**
 * Debian's Chromium for browser tests (Playwright's own browser download cannot work offline):
 * installed with apt when missing (CI runs as root), then launched headless by playwright-core.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";

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

export function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", "chromium"]]) {
    const run = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (run.status !== 0) throw new Error(`apt-get ${args.join(" ")} failed (${run.status}); install chromium`);
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`chromium is installed but ${CHROMIUM_PATH} is missing`);
}

export async function launchChromium(): Promise<Browser> {
  ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS, headless: true });
}
