/**
 * `npm run bench`: measures Frontier's claims side by side in one run and writes a report.
 * Each workload is one file exporting a `Workload` (bench/workload.ts) and one line in WORKLOADS.
 * The stack (edge in workerd + one GPU worker) is started once, when the first workload needs it,
 * unless --edge-url/--worker-grpc point at a running one.
 *
 * Options:
 *   --quick               tiny model, small prompts, one repetition (CI: proves every workload runs)
 *   --reps n              repetitions per measurement (default 3)
 *   --contexts a,b,c      prompt sizes for continuation vs cold (default 2000,8000,24000)
 *   --restore-tokens a,b  prompt sizes for checkpoint restore vs re-prefill (default 8000,24000;
 *                         the sessions workload uses the first)
 *   --agent-prefix n      tokens of the agent loop's system prompt + tools (default 20000)
 *   --agent-turns n       turns per agent loop (default 5)
 *   --only a,b            run only these workloads (names below)
 *   --llama-server PATH   also run the agent loop against llama.cpp's llama-server (peer comparison)
 *   --size tiny|mid|large generated model (default mid; tiny with --quick); FRONTIER_MODEL_PATH wins
 *   --family NAME         a real-vocabulary family model (qwen3, gpt-oss, …; tiny or mid) instead of the byte-level one
 *   --edge wrangler|workerd   which edge the workloads call (default wrangler: `wrangler dev`, what
 *                         `npm start` runs; workerd: the same edge without wrangler, scripts/workerd-edge.ts)
 *   --edge-url URL --worker-grpc URL   use a running stack instead of starting one
 *   --out PATH            report file (default docs/bench/report.md); docs/benchmarks.md is then left alone
 *   --trace FILE          the trace workload's JSONL trace (default ../shared/traces/mooncake-conversation.jsonl)
 *   --json OUT            the trace workload's machine-readable report
 *   --llama-server-prompt framed|raw   the trace workload's llama-server prompts: the chat framing
 *                         Frontier's worker prefills around each turn (default), or the trace's ids alone
 *   --workers 1,4,16,64   the pool simulation's worker counts (`--only sim`, bench/sim/; it reads --trace, --json too)
 *   --rates prefill=n,decode=n,restore=n   the simulation's costs in tokens/s (default: bench/sim/cost-model.ts)
 *   --agents n            the load workload's concurrent agents (default 64; `--only load`, bench/workloads/load/)
 *   --load k=v,…          its other settings (waves, turns, workers, tenants, contend, deadline, …: load-settings.ts)
 *   --no-record           do not update docs/benchmarks.md (otherwise a run without --quick or --out
 *                         rewrites the rows it measured in its current table, bench/current-table.ts)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { FAMILY_NAMES, isFamilyName } from "../native/model/families.ts";
import { ensureFamilyModel, type FamilyModelSize } from "../native/model/family-model.ts";
import { ensureTestModel, TEST_MODEL_SPECS, type TestModelSize } from "../native/model/gguf-writer.ts";
import { REPO_ROOT, type Stack, startStack } from "../scripts/stack.ts";
import { workerEngineBuild } from "./engine-build.ts";
import { llamaServerWorkload } from "./peer/peer-llama-server.ts";
import { reapWorkers } from "./reap-workers.ts";
import { currentRows, machineDescription, type ReportInput, recordInBenchmarksDoc, renderReport } from "./report.ts";
import { simWorkload } from "./sim/sim-workload.ts";
import { isPeerPromptMode, PEER_PROMPT_MODES, type PeerPromptMode } from "./trace/chat-framing.ts";
import { traceWorkload } from "./trace/workload.ts";
import type { BenchOptions, BenchStack, Workload, WorkloadResult } from "./workload.ts";
import { agentLoopWorkload } from "./workloads/agent-loop.ts";
import { checkpointRestoreWorkload } from "./workloads/checkpoint-restore.ts";
import { checkpointWritesWorkload } from "./workloads/checkpoint-writes.ts";
import { continuationWorkload } from "./workloads/continuation.ts";
import { fairnessWorkload } from "./workloads/fairness.ts";
import { fleetWorkload } from "./workloads/fleet/fleet-workload.ts";
import { loadSettings } from "./workloads/load/load-settings.ts";
import { loadWorkload } from "./workloads/load/load-workload.ts";
import { placementWorkload } from "./workloads/placement.ts";
import { prefixCopyWorkload } from "./workloads/prefix-copy.ts";
import { responsesLoopWorkload } from "./workloads/responses-loop.ts";
import { responsesWsWorkload } from "./workloads/responses-ws-loop.ts";
import { routingOverheadWorkload } from "./workloads/routing-overhead.ts";
import { sessionsWorkload } from "./workloads/sessions.ts";

/** Run order. Add a workload here (one line) and in its own file. */
const WORKLOADS: Workload[] = [
  sessionsWorkload,
  agentLoopWorkload,
  responsesLoopWorkload,
  responsesWsWorkload,
  checkpointWritesWorkload,
  checkpointRestoreWorkload,
  prefixCopyWorkload,
  continuationWorkload,
  routingOverheadWorkload,
  placementWorkload,
  llamaServerWorkload,
  traceWorkload(() => ({
    trace: values.trace,
    json: values.json,
    peerPrompt: peerPromptMode(values["llama-server-prompt"]),
  })),
  fleetWorkload,
  simWorkload,
  fairnessWorkload,
  loadWorkload,
];

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    reps: { type: "string" },
    contexts: { type: "string" },
    "restore-tokens": { type: "string" },
    "agent-prefix": { type: "string" },
    "agent-turns": { type: "string" },
    only: { type: "string" },
    "llama-server": { type: "string" },
    "llama-server-prompt": { type: "string" },
    size: { type: "string" },
    family: { type: "string" },
    edge: { type: "string", default: "wrangler" },
    "edge-url": { type: "string" },
    "worker-grpc": { type: "string" },
    out: { type: "string" },
    "no-record": { type: "boolean", default: false },
    trace: { type: "string" },
    json: { type: "string" },
    workers: { type: "string" },
    rates: { type: "string" },
    agents: { type: "string" },
    load: { type: "string" },
  },
});

function peerPromptMode(value: string | undefined): PeerPromptMode | undefined {
  if (value === undefined || isPeerPromptMode(value)) return value;
  throw new Error(`--llama-server-prompt must be one of ${PEER_PROMPT_MODES}`);
}

function numberList(text: string): number[] {
  const list = text.split(",").map(Number);
  if (list.some((n) => !Number.isSafeInteger(n) || n <= 0)) throw new Error(`not a list of positive integers: ${text}`);
  return list;
}

async function resolveOptions(): Promise<BenchOptions> {
  const quick = values.quick ?? false;
  // The load workload alone runs `npm start`'s model (tiny) unless --size says otherwise.
  const onlyLoad = values.only === "load";
  const size = (values.size ?? (quick || onlyLoad ? "tiny" : "mid")) as TestModelSize;
  if (!Object.hasOwn(TEST_MODEL_SPECS, size)) throw new Error(`--size must be one of ${Object.keys(TEST_MODEL_SPECS)}`);
  const family = values.family;
  if (family !== undefined && !isFamilyName(family)) throw new Error(`--family must be one of ${FAMILY_NAMES}`);
  if (family !== undefined && size !== "tiny" && size !== "mid") throw new Error("a family model is tiny or mid");
  const contexts = numberList(values.contexts ?? (quick ? "1000" : "2000,8000,24000"));
  const agentPrefixTokens = numberList(values["agent-prefix"] ?? (quick ? "3000" : "20000"))[0] ?? 20000;
  const agentTurns = numberList(values["agent-turns"] ?? (quick ? "2" : "5"))[0] ?? 5;
  const gpu = process.env.FRONTIER_GPU === "off" ? "off" : "auto";
  const edge = values.edge ?? "wrangler";
  if (edge !== "wrangler" && edge !== "workerd") throw new Error("--edge must be wrangler or workerd");
  return {
    quick,
    reps: numberList(values.reps ?? (quick ? "1" : "3"))[0] ?? 3,
    contexts,
    restoreTokens: numberList(values["restore-tokens"] ?? (quick ? "1000" : "8000"))[0] ?? 8000,
    restoreSizes: numberList(values["restore-tokens"] ?? (quick ? "1000" : "8000,24000")),
    agentPrefixTokens,
    agentTurns,
    llamaServer: values["llama-server"],
    size,
    family,
    // Generated before anything starts (the mid model takes a few seconds once, then is cached).
    modelPath:
      process.env.FRONTIER_MODEL_PATH ||
      (family === undefined ? await ensureTestModel(size) : await ensureFamilyModel(family, size as FamilyModelSize)),
    contextSize: Math.max(Math.max(...contexts), agentPrefixTokens + agentTurns * 1500) + 2048,
    sequences: 2,
    gpu,
    edge,
    load: loadSettings(quick, values.agents, values.load),
    loadRequested:
      values.agents !== undefined || values.load !== undefined || (values.only?.split(",").includes("load") ?? false),
  };
}

async function main(): Promise<void> {
  const options = await resolveOptions();
  const only = values.only?.split(",");
  const unknown = only?.filter((name) => !WORKLOADS.some((w) => w.name === name)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown workload ${unknown}; workloads: ${WORKLOADS.map((w) => w.name)}`);
  const selected = WORKLOADS.filter(
    (w) => (only === undefined || only.includes(w.name)) && (w.enabled?.(options) ?? true),
  );
  const out = values.out ?? join(REPO_ROOT, "docs/bench/report.md");
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
  const started = Date.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const progress = (message: string) =>
    process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(5)} s] ${message}\n`);

  let stack: Stack | undefined;
  let benchStack: BenchStack | undefined;
  let workerLogs: string[] = [];
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-bench-"));
  const results: { workload: Workload; result: WorkloadResult }[] = [];
  const earlier = new Map<string, Record<string, unknown>>();
  let engineBuild = "no worker started by this run";
  try {
    for (const workload of selected) {
      if (workload.needsStack && !benchStack) {
        benchStack = await openStack(options, stateDir, progress, (s) => (stack = s));
        engineBuild = benchStack.engineBuild;
        progress(`worker engine: ${engineBuild}`);
      }
      // A workload that throws is reported (and fails the run) without losing the others' numbers.
      const result = await workload
        .run({ options, stack: benchStack, earlier, progress })
        .catch((error: unknown): WorkloadResult => {
          const message = error instanceof Error ? error.message : String(error);
          return {
            summary: [],
            section: `## ${workload.name}: FAILED\n\n\`\`\`\n${message}\n\`\`\`\n`,
            violations: [`the workload failed: ${message.split("\n")[0]}`],
          };
        });
      results.push({ workload, result });
      if (result.shared) earlier.set(workload.name, result.shared);
      for (const violation of result.violations ?? []) progress(`CHECK FAILED ${workload.name}: ${violation}`);
      // A stopped run still leaves every finished workload's rows on disk.
      if (results.length < selected.length) {
        writeReport(
          out,
          {
            command,
            loadAtStart,
            machine: machineDescription(options, engineBuild),
            options,
            results,
            seconds: (Date.now() - started) / 1000,
          },
          `${results.length} of ${selected.length} workloads finished`,
        );
        progress(`partial report (${results.length} of ${selected.length} workloads) written to ${out}`);
      }
    }
  } finally {
    workerLogs = [...(benchStack?.workerLogs ?? [])];
    await (stack as Stack | undefined)?.stop();
    await reapWorkers(join(stateDir, "worker"));
    rmSync(stateDir, { recursive: true, force: true });
  }

  const machine = machineDescription(options, engineBuild);
  const report = writeReport(out, {
    command,
    loadAtStart,
    machine,
    options,
    results,
    seconds: (Date.now() - started) / 1000,
  });
  process.stdout.write(`\n${report}\nwritten to ${out}\n`);
  if (results.some(({ result }) => (result.violations ?? []).length > 0) && workerLogs.length > 0) {
    const logPath = join(dirname(out), "worker-log.txt");
    writeFileSync(logPath, `${workerLogs.slice(-2000).join("\n")}\n`);
    process.stdout.write(`a check failed: the worker's last log lines are in ${logPath}\n`);
  }
  // Rows are keyed, so a run of some workloads (--only) rewrites only theirs; --quick (tiny sizes) and a
  // report sent elsewhere (--out) never record.
  const record = !options.quick && values.out === undefined && !values["no-record"];
  if (record) {
    const rows = currentRows(
      { command, options, results },
      benchStack?.engineBuild,
      new Date().toISOString().slice(0, 10),
    );
    const { updated, added } = recordInBenchmarksDoc(join(REPO_ROOT, "docs/benchmarks.md"), rows);
    process.stdout.write(
      `docs/benchmarks.md current table: ${updated.length} rows updated, ${added.length} added${added.length > 0 ? ` (${added.join(", ")})` : ""}\n`,
    );
  }
  const failed = results.flatMap(({ workload, result }) =>
    (result.violations ?? []).map((v) => `${workload.name}: ${v}`),
  );
  if (failed.length > 0) throw new Error(`correctness checks failed:\n${failed.join("\n")}`);
}

/** Writes the report and the workloads' files next to it; `partial` marks a run still going. */
function writeReport(out: string, input: ReportInput, partial?: string): string {
  const rendered = renderReport(input);
  const report =
    partial === undefined
      ? rendered
      : rendered.replace("# Benchmark report", `# Benchmark report (partial: ${partial})`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, report);
  for (const { result } of input.results) {
    for (const [name, content] of Object.entries(result.files ?? {})) writeFileSync(join(dirname(out), name), content);
  }
  return report;
}

async function openStack(
  options: BenchOptions,
  stateDir: string,
  progress: (message: string) => void,
  keep: (stack: Stack) => void,
): Promise<BenchStack> {
  if (values["edge-url"]) {
    if (!values["worker-grpc"]) throw new Error("--edge-url needs --worker-grpc (the worker's h2c gRPC URL)");
    const workerGrpcUrl = values["worker-grpc"];
    return {
      edgeUrl: values["edge-url"],
      workerGrpcUrl,
      workerLogs: [],
      engineBuild: await workerEngineBuild(workerGrpcUrl),
    };
  }
  progress(`starting the stack (context ${options.contextSize} × ${options.sequences} sequences)`);
  const stack = await startStack({
    workers: 1,
    edgeStateDir: stateDir,
    workerEnv: {
      FRONTIER_MODEL_PATH: options.modelPath,
      FRONTIER_CONTEXT_SIZE: String(options.contextSize),
      FRONTIER_SEQUENCES: String(options.sequences),
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
      // Test-only sampling policy: a forced tool turn makes 2-3 parallel calls (a random model
      // otherwise stops after one); prompts, tokens and KV are untouched.
      FRONTIER_TEST_POLICY: "scripted-tools",
    },
    // Hold the response headers until the worker's cache decision is known, however long the
    // worker takes to get there (parking a big session first), so x-frontier-cache is always set.
    edgeVars: { HEADER_WAIT_MS: "600000" },
    edgeDirect: true,
    verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
  });
  keep(stack);
  const worker = stack.workers[0];
  if (!worker) throw new Error("no worker");
  // With --edge workerd the workloads call the edge without wrangler; the routing workload then has
  // no second edge to compare with.
  const alone = options.edge === "workerd" ? stack.edgeDirect : undefined;
  return {
    edgeUrl: alone?.url ?? stack.edgeUrl,
    workerGrpcUrl: worker.grpcUrl,
    workerLogs: worker.logs,
    edgeDirect: alone ? undefined : stack.edgeDirect,
    engineBuild: await workerEngineBuild(worker.grpcUrl),
    workerPid: () => worker.process.pid,
  };
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
