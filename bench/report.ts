/** The report: machine description, the ratio table, each workload's section; and its copy in docs/benchmarks.md. */
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { basename, join } from "node:path";
import { TEST_MODEL_SPECS } from "../native/model/gguf-writer.ts";
import { REPO_ROOT } from "../scripts/stack.ts";
import type { BenchOptions, Workload, WorkloadResult } from "./workload.ts";

export const BEGIN_MARKER = "<!-- bench:begin (written by `npm run bench`; edit outside the markers) -->";
export const END_MARKER = "<!-- bench:end -->";

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

/**
 * One paragraph: CPU, cores, RAM, GPU, Node, the llama.cpp build (as the worker's Health names it:
 * prebuilt portable or a local `npm run build:engine` build), the model and the worker settings.
 */
export function machineDescription(options: BenchOptions, engineBuild: string): string {
  const nlc = readJson(join(REPO_ROOT, "node_modules/node-llama-cpp/package.json")).version ?? "?";
  const llamaTag = readJson(join(REPO_ROOT, "node_modules/node-llama-cpp/llama/llama.cpp.info.json")).tag ?? "?";
  const gpu = gpuName();
  const spec = (TEST_MODEL_SPECS as Record<string, (typeof TEST_MODEL_SPECS)[keyof typeof TEST_MODEL_SPECS]>)[
    options.size
  ];
  const generated = process.env.FRONTIER_MODEL_PATH
    ? `\`${basename(options.modelPath)}\``
    : options.family !== undefined
      ? `generated \`${options.family}\` family model, \`${options.size}\` width (${spec ? `${spec.embedding} wide, ${spec.layers} layers, ` : ""}the family's real vocabulary and chat template, F16, random weights)`
      : `generated \`${options.size}\` test model (${spec ? `${spec.embedding} wide, ${spec.layers} layers, vocab ${spec.vocab}, ${spec.weightType}, ` : ""}random weights)`;
  return [
    `- Machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${gpu ? `GPU ${gpu}` : "no GPU"}`,
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
 * Put the report between the markers of docs/benchmarks.md (headings one level down, links to the
 * report's files made relative to docs/). Everything outside the markers is left as written.
 */
export function recordInBenchmarksDoc(docPath: string, report: string, filesPrefix: string): void {
  const doc = readFileSync(docPath, "utf8");
  const begin = doc.indexOf(BEGIN_MARKER);
  const end = doc.indexOf(END_MARKER);
  if (begin < 0 || end < begin) throw new Error(`${docPath} has no ${BEGIN_MARKER} … ${END_MARKER} section`);
  const body = report
    .split("\n")
    .map((line) => (line.startsWith("#") ? `#${line}` : line))
    .join("\n")
    .replace(/\]\(([\w.-]+\.(?:svg|png|md))\)/g, `](${filesPrefix}$1)`)
    .replace(/^# Benchmark report\n*/m, "")
    .replace(/^## Benchmark report\n*/m, "");
  writeFileSync(docPath, `${doc.slice(0, begin + BEGIN_MARKER.length)}\n\n${body.trim()}\n\n${doc.slice(end)}`);
  // The repository's formatter aligns markdown tables; keep `npm run check` green after a recording.
  spawnSync(
    process.execPath,
    [join(REPO_ROOT, "node_modules/@biomejs/biome/bin/biome"), "format", "--write", docPath],
    {
      cwd: REPO_ROOT,
      stdio: "ignore",
    },
  );
}
