/**
 * Two checkouts' edges side by side: each bundles its own edge (its scripts/workerd-edge.ts: workerd
 * without wrangler), both in front of the same instant worker, turns alternating A B B A … so that
 * this VM's drift (±10–35% between runs) falls on both alike. Per side: the streamed turn's latency
 * and workerd's CPU per turn (its process's utime + stime over the turn and the settle after it, so
 * the after-response bookkeeping counts too). Every turn continues one of four sessions whose
 * history is `--history` messages long (an edge's per-message work grows with it). Each round also
 * runs the bare turn shape in workerd (bench/turn-shape.ts: one Durable Object call and one worker
 * fetch, no Frontier code) and the same Generate straight to the worker over h2c, so the ratio
 * (side − h2c) / (shape − h2c), medians of per-round differences, is measured in the same run.
 *   git worktree add --detach /tmp/before HEAD~1 && cp -al node_modules /tmp/before/
 *   tsx bench/edge-ab.ts [--rounds 200] [--history 40] /tmp/before .
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEV_WORKER_TOKEN } from "../gpu-worker/config.ts";
import { Role } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { edgeVars, freePort } from "../scripts/stack.ts";
import type { WorkerdEdge } from "../scripts/workerd-edge.ts";
import { instantWorkerCapability } from "./edge-capability.ts";
import { BENCH_KEY } from "./edge-client.ts";
import { INSTANT_WORKER_ID, startInstantWorker } from "./instant-worker.ts";
import { percentile } from "./stats.ts";
import { startTurnShape, type TurnShape } from "./turn-shape.ts";
import { benchGenerateRequest, benchWorkerClient, textContent } from "./worker-client.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "200" }, history: { type: "string", default: "40" } },
});
if (positionals.length !== 2) throw new Error("usage: tsx bench/edge-ab.ts [--rounds N] [--history N] A_ROOT B_ROOT");
const rounds = Number(values.rounds);
const history = Number(values.history);
const WARM_UP = 40;
const SETTLE_MS = 25;

interface Side {
  name: string;
  edge: WorkerdEdge;
  pid: number;
  sessions: { headers: Record<string, string>; messages: unknown[] }[];
  ms: number[];
  cpuMs: number[];
  /** This side's turn minus the same round's h2c call. */
  overMs: number[];
}

/** workerd processes this process started (Miniflare's runtime is a child). */
function workerdChildren(): Set<number> {
  const pids = new Set<number>();
  for (const task of readdirSync("/proc/self/task")) {
    for (const pid of readFileSync(`/proc/self/task/${task}/children`, "utf8").split(" ").filter(Boolean)) {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "workerd") pids.add(Number(pid));
    }
  }
  return pids;
}

/** utime + stime of `pid`, ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const worker = await startInstantWorker();
const stateDir = mkdtempSync(join(tmpdir(), "frontier-edge-ab-"));
const sides: Side[] = [];
let shape: TurnShape | undefined;
const pingRequest = () =>
  benchGenerateRequest({ messages: [{ role: Role.USER, content: textContent("ping") }], sampling: { maxTokens: 1 } });
const h2c = benchWorkerClient(`http://127.0.0.1:${worker.grpcPort}`);
/** One Generate straight to the instant worker over h2c, read to its end; ms. */
async function direct(headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  for await (const _ of h2c.generate(pingRequest(), { headers })) {
    // drain
  }
  return performance.now() - t0;
}
/** One streamed turn (a growing one-conversation history) through the bare turn shape; ms. */
async function shapeTurn(url: string, messages: unknown[]): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "m", max_tokens: 1, stream: true, messages }),
    signal: AbortSignal.timeout(30_000),
  });
  if (response.status !== 200) throw new Error(`the turn shape answered ${response.status}: ${await response.text()}`);
  await response.text();
  return performance.now() - t0;
}
try {
  for (const [i, root] of positionals.entries()) {
    const before = workerdChildren();
    const { startWorkerdEdge } = (await import(join(resolve(root), "scripts/workerd-edge.ts"))) as {
      startWorkerdEdge: typeof import("../scripts/workerd-edge.ts").startWorkerdEdge;
    };
    const edge = await startWorkerdEdge({
      port: await freePort(),
      stateDir: join(stateDir, String(i)),
      vars: edgeVars([`http://127.0.0.1:${worker.httpPort}`], {
        WORKER_IDS: JSON.stringify({ [`http://127.0.0.1:${worker.httpPort}`]: INSTANT_WORKER_ID }),
      }),
    });
    const pid = [...workerdChildren()].find((p) => !before.has(p));
    if (pid === undefined) throw new Error(`no workerd process appeared for ${root}`);
    const messages = Array.from({ length: history }, (_, m) =>
      m % 2 ? { role: "assistant", content: "pong" } : { role: "user", content: "ping" },
    );
    const sessions = Array.from({ length: 4 }, () => ({
      headers: { "x-claude-code-session-id": crypto.randomUUID() },
      messages,
    }));
    sides.push({ name: `${"AB"[i]} ${root}`, edge, pid, sessions, ms: [], cpuMs: [], overMs: [] });
  }
  const capability = await instantWorkerCapability();
  const beforeShape = workerdChildren();
  shape = await startTurnShape({
    workerHttpUrl: `http://127.0.0.1:${worker.httpPort}`,
    workerToken: DEV_WORKER_TOKEN,
    request: pingRequest(),
    headers: capability,
  });
  const shapeMessages = Array.from({ length: history }, (_, m) =>
    m % 2 ? { role: "assistant", content: "pong" } : { role: "user", content: "ping" },
  );
  const shapePid = [...workerdChildren()].find((p) => !beforeShape.has(p));
  if (shapePid === undefined) throw new Error("no workerd process appeared for the turn shape");
  const shapeCpuMs: number[] = [];
  const shapeMs: number[] = [];
  const shapeOverMs: number[] = [];
  const h2cMs: number[] = [];
  for (let round = 0; round < WARM_UP + rounds; round++) {
    const turnMs = new Map<Side, number>();
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const session = side.sessions[round % side.sessions.length];
      if (!session) continue;
      await settle();
      const cpu0 = cpuMs(side.pid);
      const t0 = performance.now();
      const response = await fetch(`${side.edge.url}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, ...session.headers },
        body: JSON.stringify({ model: "m", max_tokens: 1, stream: true, messages: session.messages }),
        signal: AbortSignal.timeout(30_000),
      });
      if (response.status !== 200) throw new Error(`${side.name} answered ${response.status}`);
      await response.text();
      const ms = performance.now() - t0;
      await settle();
      if (round < WARM_UP) continue;
      side.ms.push(ms);
      side.cpuMs.push(cpuMs(side.pid) - cpu0);
      turnMs.set(side, ms);
    }
    const shapeCpu0 = cpuMs(shapePid);
    const shaped = await shapeTurn(shape.url, shapeMessages);
    await settle();
    const shapeCpu = cpuMs(shapePid) - shapeCpu0;
    const base = await direct(capability);
    await settle();
    if (round < WARM_UP) continue;
    shapeMs.push(shaped);
    shapeCpuMs.push(shapeCpu);
    h2cMs.push(base);
    shapeOverMs.push(shaped - base);
    for (const [side, ms] of turnMs) side.overMs.push(ms - base);
  }
  process.stdout.write(`instant worker, ${rounds} rounds, ${history}-message history, turns alternating\n`);
  const shapeOver = percentile(shapeOverMs, 50);
  process.stdout.write(
    `bare turn shape: turn p50 ${percentile(shapeMs, 50).toFixed(2)} ms, over h2c p50 ${shapeOver.toFixed(2)} ms, ` +
      `workerd CPU ${(shapeCpuMs.reduce((a, b) => a + b, 0) / shapeCpuMs.length).toFixed(2)} ms per turn; ` +
      `worker h2c directly p50 ${percentile(h2cMs, 50).toFixed(2)} ms\n`,
  );
  for (const side of sides) {
    const q = (p: number) => percentile(side.ms, p).toFixed(2);
    const cpu = side.cpuMs.reduce((a, b) => a + b, 0) / side.cpuMs.length;
    const over = percentile(side.overMs, 50);
    process.stdout.write(
      `${side.name}: turn p50 ${q(50)} ms (p25 ${q(25)}, p75 ${q(75)}); workerd CPU ${cpu.toFixed(2)} ms per turn; ` +
        `over h2c p50 ${over.toFixed(2)} ms = ${(over / shapeOver).toFixed(2)}x the shape's\n`,
    );
  }
} finally {
  for (const side of sides) await side.edge.stop();
  await shape?.stop();
  await worker.close();
  rmSync(stateDir, { recursive: true, force: true });
}
