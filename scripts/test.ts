/**
 * `npm test`: the whole gate, tier by tier, stopping at the first failure.
 *   check        typecheck (node + workerd) + biome lint/format
 *   unit         pure logic, no engine, no runtime
 *   workerd      the edge inside workerd (vitest-pool-workers): routes, auth, Durable Objects
 *   engine       native/ against the generated tiny model
 *   integration  real GPU worker process + edge in workerd over real sockets
 *   e2e          real clients: the Anthropic SDK and Claude Code's CLI
 *   bench        `npm run bench -- --quick`: proves the benchmark still runs (no timing assertions)
 * `npm test -- unit engine` runs only the named tiers.
 */
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "./stack.ts";

const vitest = (config: string, ...paths: string[]): string[] => ["npx", "vitest", "run", "--config", config, ...paths];

const TIERS: Record<string, string[][]> = {
  check: [["npm", "run", "--silent", "check"]],
  unit: [vitest("vitest.node.config.ts", "test/unit")],
  workerd: [vitest("vitest.workerd.config.ts")],
  engine: [vitest("vitest.node.config.ts", "test/engine")],
  integration: [vitest("vitest.integration.config.ts")],
  e2e: [vitest("vitest.e2e.config.ts")],
  bench: [["npx", "tsx", "bench/run.ts", "--quick", "--out", join(tmpdir(), "frontier-bench-quick.md")]],
};

const requested = process.argv.slice(2);
const names = requested.length > 0 ? requested : Object.keys(TIERS);
const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const name of names) {
  const commands = TIERS[name];
  if (!commands) {
    process.stderr.write(`unknown tier "${name}"; tiers: ${Object.keys(TIERS).join(", ")}\n`);
    process.exit(2);
  }
  const started = Date.now();
  let ok = true;
  for (const [cmd, ...args] of commands) {
    process.stdout.write(`\n=== ${name}: ${[cmd, ...args].join(" ")}\n`);
    const run = spawnSync(cmd as string, args, { cwd: REPO_ROOT, stdio: "inherit", env: process.env });
    if (run.status !== 0) {
      ok = false;
      break;
    }
  }
  results.push({ name, ok, seconds: Math.round((Date.now() - started) / 1000) });
  if (!ok) break;
}
process.stdout.write("\n");
for (const r of results) process.stdout.write(`${r.ok ? "ok  " : "FAIL"} ${r.name} (${r.seconds}s)\n`);
const passed = results.filter((r) => r.ok).length;
process.stdout.write(`tiers: ${passed} passed, ${names.length - passed} failed\n`);
process.exit(results.every((r) => r.ok) && results.length === names.length ? 0 : 1);
