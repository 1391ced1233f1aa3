/**
 * Worker memory across waves of new conversations (issue 42, "worker RSS flat across waves"): ONE real
 * worker process (tiny model, 1 thread, 4 sequences) driven straight over gRPC, around the edge, by
 * waves of fresh multi-turn tool loops like the load workload's (own system prompt each, forced tool
 * calls, tool pauses, a share of turns aborted at their first event and re-sent, four tenants). After
 * each wave (and an idle second) it reads the worker's memory through memory-probe.mjs: RSS before and
 * after a forced full GC, split into anonymous and file-backed pages, the JS heap, external and
 * ArrayBuffer memory; and the worker's own counts from the Stats RPC.
 *
 *   npx tsx bench/memory/worker-waves.ts [--waves 12] [--agents 16] [--turns 3] [--abort 0.1]
 *     [--system 900 (words)] [--out FILE.jsonl] [--untuned] [--snapshots DIR]
 *
 * The worker gets the launchers' memory settings (gpu-worker/config/process-memory.ts) unless
 * `--untuned`; MALLOC_* and NODE_OPTIONS in this process's environment reach it too.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import {
  GenerateRequestSchema,
  type MessageSchema,
  Role,
  ToolChoiceMode,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { REPO_ROOT, startWorker, stopChild } from "../../scripts/stack.ts";
import { newSessionId } from "../../shared/ids.ts";
import { type BenchWorkerClient, benchWorkerClient, textContent } from "../clients/worker-client.ts";
import {
  abortsTurn,
  LOAD_TOOLS,
  systemPrompt,
  taskText,
  toolOutput,
  toolPauseMs,
} from "../workloads/load/load-script.ts";

const { values } = parseArgs({
  options: {
    waves: { type: "string", default: "12" },
    agents: { type: "string", default: "16" },
    turns: { type: "string", default: "3" },
    abort: { type: "string", default: "0.1" },
    system: { type: "string", default: "900" },
    out: { type: "string" },
    /** Start the worker without the memory settings the launchers add (glibc's and V8's defaults). */
    untuned: { type: "boolean", default: false },
    /** A folder for a heap snapshot of the worker after each reading (bench/memory/heap-diff.ts compares two). */
    snapshots: { type: "string" },
  },
});
const waves = Number(values.waves);
const agents = Number(values.agents);
const turns = Number(values.turns);
const abortShare = Number(values.abort);
const systemWords = Number(values.system);
const TENANTS = ["local", "load-1", "load-2", "load-3"];

const tools = LOAD_TOOLS.map((t) => ({
  name: t.name,
  description: t.description,
  inputSchemaJson: JSON.stringify(t.input_schema),
}));

type Message = MessageInitShape<typeof MessageSchema>;

interface TurnCount {
  done: number;
  failed: number;
  aborted: number;
}

/** One Generate call read to its end (or aborted at its first event): the tool calls it made. */
async function generate(
  client: BenchWorkerClient,
  tenant: string,
  sessionId: string,
  agent: string,
  messages: Message[],
  abort: boolean,
): Promise<{ calls: { id: string; name: string; input: string }[]; error?: string; aborted: boolean }> {
  const request = create(GenerateRequestSchema, {
    requestId: `${agent}-${messages.length}`,
    tenantId: tenant,
    sessionId,
    epoch: 1n,
    idKinds: { message: "msg", toolCall: "toolu" },
    conversation: {
      system: [systemPrompt(agent, systemWords)],
      messages,
      tools,
      toolChoice: { mode: ToolChoiceMode.ANY },
    },
    sampling: { maxTokens: 48, temperature: 0 },
  });
  const controller = new AbortController();
  const calls: { id: string; name: string; input: string }[] = [];
  try {
    for await (const event of client.generate(request, { signal: controller.signal })) {
      const e = event.event;
      if (abort) {
        controller.abort();
        return { calls, aborted: true };
      }
      if (e.case === "toolCallStart") calls.push({ id: e.value.id, name: e.value.name, input: "" });
      else if (e.case === "toolCallDelta") {
        const call = calls[e.value.index];
        if (call) call.input += e.value.argumentsJson;
      } else if (e.case === "error") return { calls, error: e.value.message, aborted: false };
    }
  } catch (error) {
    if (abort && controller.signal.aborted) return { calls, aborted: true };
    return { calls, error: String(error), aborted: false };
  }
  return { calls, aborted: false };
}

async function agentLoop(client: BenchWorkerClient, wave: number, index: number, count: TurnCount): Promise<void> {
  const agent = `w${wave}a${index}`;
  const tenant = TENANTS[index % TENANTS.length] ?? "local";
  const sessionId = newSessionId();
  const messages: Message[] = [{ role: Role.USER, content: textContent(taskText(agent)) }];
  for (let turn = 0; turn < turns; turn++) {
    if (abortsTurn(agent, turn, abortShare)) {
      await generate(client, tenant, sessionId, agent, messages, true);
      count.aborted++;
    }
    const result = await generate(client, tenant, sessionId, agent, messages, false);
    if (result.error !== undefined || result.calls.length === 0) {
      count.failed++;
      process.stderr.write(`${agent} turn ${turn}: ${result.error ?? "no tool call"}\n`);
      return;
    }
    count.done++;
    messages.push({
      role: Role.ASSISTANT,
      content: result.calls.map((c) => ({
        block: { case: "toolUse" as const, value: { id: c.id, name: c.name, inputJson: c.input } },
      })),
    });
    await new Promise((r) => setTimeout(r, toolPauseMs(agent, turn, [50, 450])));
    messages.push({
      role: Role.USER,
      content: result.calls.map((c, i) => ({
        block: { case: "toolResult" as const, value: { toolUseId: c.id, content: toolOutput(agent, turn, i) } },
      })),
    });
  }
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

const stateDir = mkdtempSync(join(tmpdir(), "frontier-worker-waves-"));
const probeFile = join(stateDir, "probe.jsonl");
const modelPath = process.env.FRONTIER_MODEL_PATH || (await ensureTestModel("tiny"));
const worker = await startWorker(
  {
    FRONTIER_MODEL_PATH: modelPath,
    FRONTIER_CONTEXT_SIZE: process.env.FRONTIER_CONTEXT_SIZE ?? "8192",
    FRONTIER_SEQUENCES: process.env.FRONTIER_SEQUENCES ?? "4",
    FRONTIER_THREADS: "1",
    FRONTIER_STATE_DIR: join(stateDir, "worker"),
    FRONTIER_MEMORY_PROBE_FILE: probeFile,
    ...(values.snapshots ? { FRONTIER_MEMORY_PROBE_SNAPSHOTS: values.snapshots } : {}),
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --expose-gc --import ${join(REPO_ROOT, "bench/memory/memory-probe.mjs")}`,
  },
  false,
  [],
  !values.untuned,
);
const client = benchWorkerClient(worker.grpcUrl);
const ready = worker.logs.find((line) => line.includes(" worker ready "));
process.stdout.write(`memory settings missing: ${/memorySettingsMissing=(\S+)/.exec(ready ?? "")?.[1] ?? "none"}\n`);

/** One reading of memory-probe.mjs (bytes). */
interface Reading {
  rss: number;
  file: number;
  v8Pages: number;
  brkHeap: number;
  otherAnon: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

interface Probe {
  before: Reading;
  afterGc: Reading;
  later: Reading;
}

async function probe(): Promise<Probe> {
  const lines = (): string[] => {
    try {
      return readFileSync(probeFile, "utf8").trim().split("\n").filter(Boolean);
    } catch {
      return [];
    }
  };
  const have = lines().length;
  worker.process.kill("SIGUSR2");
  for (let i = 0; i < 1200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const all = lines();
    if (all.length > have) return JSON.parse(all.at(-1) ?? "{}") as Probe;
  }
  throw new Error("the worker's memory probe did not answer in 60 s");
}

const rows: unknown[] = [];
function describe(r: Reading): string {
  return (
    `rss ${mib(r.rss)} = v8 pages ${mib(r.v8Pages)} + brk ${mib(r.brkHeap)} + anon ${mib(r.otherAnon)} + file ${mib(r.file)}; ` +
    `heap ${mib(r.heapUsed)}/${mib(r.heapTotal)} ext ${mib(r.external)} ab ${mib(r.arrayBuffers)}`
  );
}

async function sample(label: string, count?: TurnCount): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000));
  const p = await probe();
  const stats = await client.stats({});
  const row = { label, ...count, probe: p, stats: { ...stats, checkpointBytes: Number(stats.checkpointBytes) } };
  rows.push(row);
  process.stdout.write(
    `${label}: ${describe(p.before)}\n   after gc + 1 s: ${describe(p.later)}\n   ` +
      `live ${stats.liveSessions} parked ${stats.parkedSessions} checkpoints ${stats.checkpoints} (${mib(Number(stats.checkpointBytes))} MiB)` +
      (count ? ` turns ${count.done} failed ${count.failed} aborted ${count.aborted}` : "") +
      "\n",
  );
}

try {
  await sample("start");
  for (let wave = 1; wave <= waves; wave++) {
    const count: TurnCount = { done: 0, failed: 0, aborted: 0 };
    await Promise.all(Array.from({ length: agents }, (_, i) => agentLoop(client, wave, i, count)));
    await sample(`wave ${wave}`, count);
  }
} finally {
  await stopChild(worker.process);
  if (values.out) {
    const { writeFileSync } = await import("node:fs");
    const json = (row: unknown) => JSON.stringify(row, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v));
    writeFileSync(values.out, `${rows.map(json).join("\n")}\n`);
  }
  rmSync(stateDir, { recursive: true, force: true });
}
