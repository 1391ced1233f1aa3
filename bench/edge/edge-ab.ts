/**
 * One to four checkouts' edges side by side: each bundles its own edge (its scripts/workerd-edge.ts:
 * workerd without wrangler), all in front of the same instant worker, turns alternating A B B A … so
 * that this VM's drift (±10–35% between runs) falls on both alike. Per side: the streamed turn's
 * latency and workerd's CPU per turn (the on-CPU time of its process's threads, /proc schedstat, over
 * the turn and the settle after it, so the after-response bookkeeping counts too). Every turn
 * continues one of four sessions whose history is `--history` messages long (an edge's per-message
 * work grows with it). Each round also runs two reference shapes in workerd with no Frontier code,
 * the bare turn shape (bench/edge/turn-shape.ts: one Durable Object call and one worker fetch) and the
 * required-work shape (bench/edge/required-work-shape.ts: what a multi-tenant turn cannot skip), and the
 * same Generate straight to the worker over h2c, so the ratios (side − h2c) / (shape − h2c), medians
 * of per-round differences, are measured in the same run.
 *   git worktree add --detach /tmp/before HEAD~1 && cp -al node_modules /tmp/before/
 *   tsx bench/edge/edge-ab.ts [--rounds 200] [--history 40] /tmp/before .
 *   tsx bench/edge/edge-ab.ts [--rounds 200] [--history 40] .     # this edge against the shapes only
 *   (up to four roots: A B C D, then D C B A, …)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { Role } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { edgeVars, freePort, REPO_ROOT } from "../../scripts/stack.ts";
import type { WorkerdEdge } from "../../scripts/workerd-edge.ts";
import { workerKey } from "../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { BENCH_KEY } from "../clients/edge-client.ts";
import { benchGenerateRequest, benchWorkerClient, textContent } from "../clients/worker-client.ts";
import { percentile } from "../stats.ts";
import { instantWorkerCapability } from "./edge-capability.ts";
import { INSTANT_WORKER_ID, startInstantWorker } from "./instant-worker.ts";
import { startRequiredWorkShape } from "./required-work-shape.ts";
import { startTurnShape, type TurnShape } from "./turn-shape.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string", default: "200" }, history: { type: "string", default: "40" } },
});
if (positionals.length < 1 || positionals.length > 4) {
  throw new Error("usage: tsx bench/edge/edge-ab.ts [--rounds N] [--history N] A_ROOT [B_ROOT [C_ROOT [D_ROOT]]]");
}
const rounds = Number(values.rounds);
const history = Number(values.history);
const WARM_UP = 40;
const SETTLE_MS = 25;

/** What a run measures of one workerd: an edge's side or a reference shape. */
interface Measured {
  name: string;
  pid: number;
  ms: number[];
  cpuMs: number[];
  /** This one's turn minus the same round's h2c call. */
  overMs: number[];
  edge?: WorkerdEdge;
}

interface Side extends Measured {
  edge: WorkerdEdge;
  sessions: { headers: Record<string, string>; messages: unknown[] }[];
}

interface Reference extends Measured {
  shape: TurnShape;
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

/** On-CPU time of `pid`'s threads, ms (schedstat's nanoseconds: utime/stime count 10 ms ticks). */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended between the listing and the read
    }
  }
  return ns / 1e6;
}

const settle = () => new Promise((r) => setTimeout(r, SETTLE_MS));
const worker = await startInstantWorker();
const stateDir = mkdtempSync(join(tmpdir(), "frontier-edge-ab-"));
const sides: Side[] = [];
const references: Reference[] = [];
const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;
/** The mean's standard error. */
const standardError = (values: readonly number[]) => {
  const m = mean(values);
  return Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / (values.length - 1) / values.length);
};
/** `measured`'s p50 over h2c as a multiple of `shape`'s. */
const ratio = (measured: Measured, shape: Measured) =>
  `${(percentile(measured.overMs, 50) / percentile(shape.overMs, 50)).toFixed(2)}x`;
/** The edge's runtime settings (wrangler.toml's compatibility date and flags), for the required-work shape. */
function edgeCompatibility(): { date: string; flags: string[] } {
  const toml = readFileSync(join(REPO_ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1];
  if (!date || flags === undefined) throw new Error("wrangler.toml names no compatibility date or flags");
  return { date, flags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1] ?? "") };
}
/** Start a reference shape and find its workerd process. */
async function reference(name: string, start: () => Promise<TurnShape>): Promise<Reference> {
  const before = workerdChildren();
  const shape = await start();
  const pid = [...workerdChildren()].find((p) => !before.has(p));
  if (pid === undefined) throw new Error(`no workerd process appeared for the ${name}`);
  return { name, shape, pid, ms: [], cpuMs: [], overMs: [] };
}
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
/** One streamed turn (the sides' history) through a reference shape; ms. */
async function shapeTurn(url: string, messages: unknown[], headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, ...headers },
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
      startWorkerdEdge: typeof import("../../scripts/workerd-edge.ts").startWorkerdEdge;
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
    sides.push({ name: `${"ABCD"[i]} ${root}`, edge, pid, sessions, ms: [], cpuMs: [], overMs: [] });
  }
  const capability = await instantWorkerCapability();
  const workerHttpUrl = `http://127.0.0.1:${worker.httpPort}`;
  const historyRequest = benchGenerateRequest({
    messages: Array.from({ length: history }, (_, m) => ({
      role: m % 2 ? Role.ASSISTANT : Role.USER,
      content: textContent(m % 2 ? "pong" : "ping"),
    })),
    sampling: { maxTokens: 1 },
  });
  const key = await workerKey(DEV_ID_SECRET, INSTANT_WORKER_ID);
  const token = DEV_WORKER_TOKEN;
  references.push(
    await reference("bare turn shape", () =>
      startTurnShape({ workerHttpUrl, workerToken: token, request: pingRequest(), headers: capability }),
    ),
    await reference("required-work shape", () =>
      startRequiredWorkShape({
        workerHttpUrl,
        workerToken: token,
        workerId: INSTANT_WORKER_ID,
        workerKey: key,
        request: historyRequest,
        compatibility: edgeCompatibility(),
      }),
    ),
  );
  const shapeMessages = Array.from({ length: history }, (_, m) =>
    m % 2 ? { role: "assistant", content: "pong" } : { role: "user", content: "ping" },
  );
  const shapeHeaders = { "x-claude-code-session-id": crypto.randomUUID() };
  const h2cMs: number[] = [];
  for (let round = 0; round < WARM_UP + rounds; round++) {
    const turnMs = new Map<Measured, number>();
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
    for (const ref of round % 2 ? [...references].reverse() : references) {
      const cpu0 = cpuMs(ref.pid);
      const ms = await shapeTurn(ref.shape.url, shapeMessages, shapeHeaders);
      await settle();
      if (round < WARM_UP) continue;
      ref.ms.push(ms);
      ref.cpuMs.push(cpuMs(ref.pid) - cpu0);
      turnMs.set(ref, ms);
    }
    const base = await direct(capability);
    await settle();
    if (round < WARM_UP) continue;
    h2cMs.push(base);
    for (const [measured, ms] of turnMs) measured.overMs.push(ms - base);
  }
  process.stdout.write(
    `instant worker, ${rounds} rounds, ${history}-message history, turns alternating; ` +
      `worker h2c directly p50 ${percentile(h2cMs, 50).toFixed(2)} ms, p10 ${percentile(h2cMs, 10).toFixed(2)} ms; ` +
      `load average ${loadavg()[0]?.toFixed(1)}\n`,
  );
  /** The least-disturbed turns (p10, a loaded VM's scheduling delays mostly left out) over h2c's p10. */
  const quietOver = (measured: Measured) => percentile(measured.ms, 10) - percentile(h2cMs, 10);
  const [bare, required] = references;
  if (!bare || !required) throw new Error("the reference shapes did not start");
  for (const measured of [...references, ...sides]) {
    const q = (p: number) => percentile(measured.ms, p).toFixed(2);
    const ratios = measured.edge
      ? `; over h2c ${ratio(measured, bare)} the bare shape's, ${ratio(measured, required)} the required-work shape's ` +
        `(p10s: ${(quietOver(measured) / quietOver(bare)).toFixed(2)}x / ${(quietOver(measured) / quietOver(required)).toFixed(2)}x); ` +
        `CPU ${(mean(measured.cpuMs) / mean(bare.cpuMs)).toFixed(2)}x / ${(mean(measured.cpuMs) / mean(required.cpuMs)).toFixed(2)}x`
      : "";
    process.stdout.write(
      `${measured.name}: turn p50 ${q(50)} ms (p25 ${q(25)}, p75 ${q(75)}); workerd CPU ${mean(measured.cpuMs).toFixed(2)} ± ${standardError(measured.cpuMs).toFixed(2)} ms per turn; ` +
        `over h2c p50 ${percentile(measured.overMs, 50).toFixed(2)} ms, p10s ${quietOver(measured).toFixed(2)} ms${ratios}\n`,
    );
  }
} finally {
  for (const side of sides) await side.edge.stop();
  for (const ref of references) await ref.shape.stop();
  await worker.close();
  rmSync(stateDir, { recursive: true, force: true });
}
