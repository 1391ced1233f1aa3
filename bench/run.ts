/**
 * `npm run bench`: starts the stack (edge in workerd + one GPU worker) on the generated mid-size
 * model, runs the workloads side by side and writes docs/bench/report.md.
 *   --quick        tiny model, small prompts, one repetition (CI proves the benchmark runs)
 *   --contexts a,b prompt sizes for continuation vs cold (default 2000,8000,24000)
 *   --reps n       repetitions per size (default 3)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { REPO_ROOT, startStack } from "../scripts/stack.ts";
import { benchContinuation, type ContinuationRow, continuationTable } from "./continuation.ts";
import { benchRoutingOverhead, overheadTable } from "./routing-overhead.ts";

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    contexts: { type: "string" },
    reps: { type: "string" },
    out: { type: "string", default: join(REPO_ROOT, "docs/bench/report.md") },
  },
});
const quick = values.quick ?? false;
const contexts = (values.contexts ?? (quick ? "1000" : "2000,8000,24000")).split(",").map(Number);
const reps = Number(values.reps ?? (quick ? "1" : "3"));
const size = quick ? "tiny" : "mid";
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
  const model = process.env.FRONTIER_MODEL_PATH || `generated ${size} test model`;
  const report = [
    "# Benchmark report",
    "",
    `Command: \`npm run bench${quick ? " -- --quick" : ""}\` — ${new Date().toISOString()}`,
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; llama.cpp threads=1 (CPU)`,
    `Model: ${model}; context ${contextSize} per sequence, 2 sequences.`,
    "",
    "## Live continuation vs cold prefill (TTFT = prefill + first token, through the edge)",
    "",
    continuationTable(rows),
    "",
    "## Routing overhead (loopback)",
    "",
    overheadTable(overhead),
    "",
  ].join("\n");
  mkdirSync(join(values.out ?? "", ".."), { recursive: true });
  writeFileSync(values.out ?? "", report);
  process.stdout.write(`\n${report}\nwritten to ${values.out}\n`);
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
