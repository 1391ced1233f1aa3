/** The report: machine description, the ratio table, each workload's section; and its rows in docs/benchmarks.md's current table. */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { basename, join } from "node:path";
import { TEST_MODEL_SPECS } from "../native/model/gguf-writer.ts";
import { REPO_ROOT } from "../scripts/stack.ts";
import { type CurrentRow, rowId, updateCurrentTable } from "./current-table.ts";
import type { BenchOptions, Workload, WorkloadResult } from "./workload.ts";

function readJson(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function gpuName(): string | undefined {
  try {
    const out = execFileSync("nvidia-smi", ["--query-gpu=name,memory.total", "--format=csv,noheader"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.trim().split("\n").join("; ") || undefined;
  } catch {
    return undefined;
  }
}

/** CPU, cores, RAM and GPU in one line. */
function machineSummary(): string {
  const gpu = gpuName();
  return `${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${gpu ? `GPU ${gpu}` : "no GPU"}`;
}

/** The model a run served, as ids and the current table name it: `mid`, `tiny`, `qwen3-mid`, or the GGUF's name. */
function modelTag(options: BenchOptions): string {
  if (process.env.FRONTIER_MODEL_PATH) return basename(options.modelPath).replace(/\.gguf$/, "");
  return options.family === undefined ? options.size : `${options.family}-${options.size}`;
}

/**
 * One paragraph: CPU, cores, RAM, GPU, Node, the llama.cpp build (as the worker's Health names it:
 * prebuilt portable or a local `npm run build:engine` build), the model and the worker settings.
 */
export function machineDescription(options: BenchOptions, engineBuild: string): string {
  const nlc = readJson(join(REPO_ROOT, "node_modules/node-llama-cpp/package.json")).version ?? "?";
  const llamaTag = readJson(join(REPO_ROOT, "node_modules/node-llama-cpp/llama/llama.cpp.info.json")).tag ?? "?";
  const spec = (TEST_MODEL_SPECS as Record<string, (typeof TEST_MODEL_SPECS)[keyof typeof TEST_MODEL_SPECS]>)[
    options.size
  ];
  const generated = process.env.FRONTIER_MODEL_PATH
    ? `\`${basename(options.modelPath)}\``
    : options.family !== undefined
      ? `generated \`${options.family}\` family model, \`${options.size}\` width (${spec ? `${spec.embedding} wide, ${spec.layers} layers, ` : ""}the family's real vocabulary and chat template, F16, random weights)`
      : `generated \`${options.size}\` test model (${spec ? `${spec.embedding} wide, ${spec.layers} layers, vocab ${spec.vocab}, ${spec.weightType}, ` : ""}random weights)`;
  return [
    `- Machine: ${machineSummary()}`,
    `- Software: Node ${process.version}; llama.cpp via node-llama-cpp ${nlc} (release ${llamaTag}); worker engine: ${engineBuild}; threads = ${process.env.FRONTIER_THREADS || 1}, flash attention ${process.env.FRONTIER_FLASH_ATTENTION || "off"}`,
    `- Model: ${generated}`,
    `- Stack: edge in ${options.edge === "workerd" ? "workerd without wrangler (scripts/workerd-edge.ts)" : "`wrangler dev` (workerd)"} + one GPU worker process, loopback; worker context ${options.contextSize} cells × ${options.sequences} sequences`,
  ].join("\n");
}

export interface ReportInput {
  command: string;
  /** 1-minute load average when the run started (other processes sharing the CPU skew timings). */
  loadAtStart: number;
  machine: string;
  options: BenchOptions;
  results: { workload: Workload; result: WorkloadResult }[];
  seconds: number;
}

export function renderReport(input: ReportInput): string {
  const rows = input.results.flatMap(({ result }) => result.summary);
  const violations = input.results.flatMap(({ workload, result }) =>
    (result.violations ?? []).map((v) => `- **${workload.name}**: ${v}`),
  );
  return [
    "# Benchmark report",
    "",
    `- Command: \`${input.command}\` (${new Date().toISOString().slice(0, 10)}, ${(input.seconds / 60).toFixed(1)} minutes; ${input.options.reps} repetition${input.options.reps > 1 ? "s" : ""} per measurement)`,
    input.machine,
    `- Load: 1-minute load average ${input.loadAtStart.toFixed(1)} at the start, ${(loadavg()[0] ?? 0).toFixed(1)} at the end, on ${cpus().length} cores`,
    "",
    "## Ratios (medians; spread = min–max over the repetitions)",
    "",
    "| workload | measure | median | spread |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.workload} | ${r.measure} | **${r.value}** | ${r.spread} |`),
    "",
    violations.length === 0
      ? "Correctness checks (not timings): all passed — every continuation prefilled exactly its suffix."
      : ["Correctness checks FAILED:", "", ...violations].join("\n"),
    "",
    ...input.results.map(({ result }) => result.section),
  ].join("\n");
}

/**
 * The current table's rows for what this run measured: one per summary row, keyed by rowId, with the
 * run's command, date, machine, model and engine build.
 */
export function currentRows(
  input: Pick<ReportInput, "command" | "options" | "results">,
  engineBuild: string | undefined,
  date: string,
): CurrentRow[] {
  const model = modelTag(input.options);
  // The worker's engine build when this run started one ("prebuilt CPU build", "local CPU build", ...).
  const engine = engineBuild === undefined ? "" : `; ${engineBuild.split(" (")[0]}`;
  const machine = `${machineSummary()}; \`${model}\` model${engine}`;
  return input.results.flatMap(({ result }) =>
    result.summary.map((r) => ({
      id: rowId(model, r.workload, r.measure),
      claim: `${r.workload}: ${r.measure}`,
      value: `**${r.value}**`,
      spread: r.spread,
      command: `\`${input.command}\``,
      date,
      machine,
      source: "that run's report (`docs/bench/report.md`, not committed)",
    })),
  );
}

/**
 * Write the run's rows into docs/benchmarks.md's current table (rows of workloads it did not run, and
 * rows measured by hand, are left as they are), then let the repository's formatter align the table.
 */
export function recordInBenchmarksDoc(
  docPath: string,
  rows: readonly CurrentRow[],
): { updated: string[]; added: string[] } {
  const { doc, updated, added } = updateCurrentTable(readFileSync(docPath, "utf8"), rows);
  writeFileSync(docPath, doc);
  // The repository's formatter aligns markdown tables; keep `npm run check` green after a recording.
  spawnSync(
    process.execPath,
    [join(REPO_ROOT, "node_modules/@biomejs/biome/bin/biome"), "format", "--write", docPath],
    {
      cwd: REPO_ROOT,
      stdio: "ignore",
    },
  );
  return { updated, added };
}
