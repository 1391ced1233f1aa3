/**
 * Where the e2e tier finds its clients, and what it reports about them.
 *
 * By default the CLIs and SDKs are the repo's pinned devDependencies. With `FRONTIER_CLIENTS_DIR`
 * set (`npm run clients:latest` sets it) they come from that folder's `node_modules` instead: the
 * CLIs by their `.bin` links, the SDKs through the e2e config's resolver plugin
 * (`sdk-packages-plugin.ts`). With `FRONTIER_CLIENTS_REPORT` set, each client test appends one
 * JSON line per continued turn it measured (prompt tokens and how many were prefilled) to it.
 */
import { appendFileSync } from "node:fs";
import { basename, join } from "node:path";
import { expect } from "vitest";
import type { ContinuedTurnReport } from "../../scripts/clients-latest/report.ts";
import { REPO_ROOT } from "../../scripts/stack.ts";

/** The folder whose `node_modules` holds the clients under test. */
export function clientsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.FRONTIER_CLIENTS_DIR || REPO_ROOT;
}

/** The path of a client CLI's `node_modules/.bin` entry (`claude`, `codex`, `qwen`, `opencode`). */
export function clientBin(name: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(clientsRoot(env), "node_modules", ".bin", name);
}

/**
 * Report the continued turn of the running test (`prompt` tokens, `cached` of them reused) when
 * `FRONTIER_CLIENTS_REPORT` names a file; otherwise do nothing.
 */
export function reportContinuedTurn(turn: string, prompt: number, cached: number): void {
  const file = process.env.FRONTIER_CLIENTS_REPORT;
  if (!file) return;
  const testPath = expect.getState().testPath ?? "unknown";
  const line: ContinuedTurnReport = { file: basename(testPath), turn, prompt, prefilled: prompt - cached };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}
