/**
 * `npm run bench`: measures Frontier's claims side by side and writes docs/bench/report.md.
 *   1. sessions (in process, real engine + checkpoint store): restore vs re-prefill, aggregate
 *      decode at 1/2/4/8 sessions, checkpoint bytes per token, memory per resident session;
 *   2. through the stack (edge in workerd + one GPU worker): continuation vs cold TTFT, edge overhead.
 * Options:
 *   --quick               tiny model, small prompts, one repetition (proves the benchmark runs)
 *   --contexts a,b        prompt sizes for continuation vs cold (default 2000,8000,24000)
 *   --reps n              repetitions per measurement (default 3)
 *   --restore-tokens n    prompt size for restore vs re-prefill (default 8000)
 *   --only sessions|stack run one group
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT, startStack } from "../scripts/stack.ts";
import { benchContinuation, type ContinuationRow, continuationTable } from "./continuation.ts";
import { benchRoutingOverhead, overheadTable } from "./routing-overhead.ts";
import { benchSessions, sessionsTable } from "./sessions.ts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    contexts: { type: "string" },
    reps: { type: "string" },
    "restore-tokens": { type: "string" },
    only: { type: "string" },
    out: { type: "string", default: join(REPO_ROOT, "docs/bench/report.md") },
  },
});
const quick = values.quick ?? false;
const contexts = (values.contexts ?? (quick ? "1000" : "2000,8000,24000")).split(",").map(Number);
const reps = Number(values.reps ?? (quick ? "1" : "3"));
const restoreTokens = Number(values["restore-tokens"] ?? (quick ? "1000" : "8000"));
const size = quick ? "tiny" : "mid";
const only = values.only;
const model = process.env.FRONTIER_MODEL_PATH || `generated ${size} test model`;

async function main(): Promise<void> {
  const sections: string[] = [
    "# Benchmark report",
    "",
    `Command: \`npm run bench${process.argv.slice(2).length ? ` -- ${process.argv.slice(2).join(" ")}` : ""}\` — ${new Date().toISOString()}`,
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; llama.cpp threads=1 (CPU)`,
    `Model: ${model}.`,
    "",
  ];

  if (only === undefined || only === "sessions") {
    process.stdout.write(`sessions: restore vs re-prefill at ${restoreTokens} tokens, decode at 1/2/4/8 sessions...\n`);
    const report = await benchSessions(size, restoreTokens, reps);
    sections.push("## Many sessions on one worker (in process)", "", sessionsTable(report), "");
  }

  if (only === undefined || only === "stack") {
    const contextSize = Math.max(...contexts) + 2048;
    const stateDir = mkdtempSync(join(tmpdir(), "frontier-bench-"));
    const stack = await startStack({
      workers: 1,
      edgeStateDir: stateDir,
      workerEnv: {
        FRONTIER_TEST_MODEL_SIZE: size,
        FRONTIER_CONTEXT_SIZE: String(contextSize),
        FRONTIER_SEQUENCES: "2",
        FRONTIER_STATE_DIR: join(stateDir, "worker"),
        FRONTIER_MODEL_PATH: process.env.FRONTIER_MODEL_PATH ?? "",
      },
      verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
    });
    try {
      const worker = stack.workers[0];
      if (!worker) throw new Error("no worker");
      const rows: ContinuationRow[] = [];
      for (const tokens of contexts) {
        process.stdout.write(`continuation vs cold at ~${tokens} tokens (${reps} reps)...\n`);
        rows.push(await benchContinuation(stack.edgeUrl, tokens, reps));
      }
      process.stdout.write("routing overhead...\n");
      const overhead = await benchRoutingOverhead(stack.edgeUrl, worker.grpcUrl, quick ? 10 : 50);
      sections.push(
        `## Live continuation vs cold prefill (TTFT = prefill + first token, through the edge; context ${contextSize}, 2 sequences)`,
        "",
        continuationTable(rows),
        "",
        "## Routing overhead (loopback)",
        "",
        overheadTable(overhead),
        "",
      );
    } finally {
      await stack.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }

  const out = values.out ?? join(REPO_ROOT, "docs/bench/report.md");
  const report = sections.join("\n");
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, report);
  process.stdout.write(`\n${report}\nwritten to ${out}\n`);
}

// Exit explicitly either way: idle HTTP/2 sessions of the direct gRPC client (and the engine's
// native handles) would otherwise keep the event loop alive after the run.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(
      `benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
