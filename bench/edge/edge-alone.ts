/**
 * What the edge itself adds to a turn, without a model's variance: an instant worker (the worker's
 * own gRPC server, answering every Generate at once with prompt → "pong" → stop) behind the real
 * edge in workerd. Each round runs one continuing streamed turn through `wrangler dev`, one to
 * wrangler's workerd directly (past its proxy), one to the same edge in workerd without wrangler at
 * all (scripts/workerd-edge.ts: no dev proxy, inspector or request log), and the same Generate
 * straight to the instant worker over h2c and over gRPC-Web (HTTP/1.1, what workerd speaks);
 * overheads are medians of the per-round differences. Also the floor (an authenticated
 * `GET /v1/models`: workerd and auth, no Durable Object, no worker) on both workerds, and the turn's
 * shape in workerd with none of Frontier's code (bench/edge/turn-shape.ts: parse, one Durable Object RPC,
 * the gRPC-Web call, SSE out): the runtime's own price for what a turn does. Each
 * measurement starts `SETTLE_MS` after the previous one, so none pays for another's background work.
 *   `tsx bench/edge/edge-alone.ts [--rounds 200] [--no-limits] [--no-wrangler] [--state-in DIR]`
 * `--no-wrangler` leaves out both wrangler paths (wrangler dev restarts its workerd whenever a
 * watched source file changes: in a checkout others edit, those paths fail mid-run).
 * `--no-limits` turns the tenant limiter off (TENANT_MAX_CONCURRENT=0, TENANT_RATE_PER_MIN=0), to
 * show its share. `--state-in` puts the edges' state (Durable Objects' SQLite files) in DIR, e.g.
 * /dev/shm to show what fsync on this disk costs.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parseServerTiming } from "../../edge/core/timing.ts";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { Role } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type EdgeDirect, edgeVars, freePort, startEdge, stopChild } from "../../scripts/stack.ts";
import { startWorkerdEdge } from "../../scripts/workerd-edge.ts";
import { BENCH_KEY } from "../clients/edge-client.ts";
import {
  type BenchWorkerClient,
  benchGenerateRequest,
  benchWorkerClient,
  textContent,
} from "../clients/worker-client.ts";
import { percentile } from "../stats.ts";
import { instantWorkerCapability, signingCostMs } from "./edge-capability.ts";
import { INSTANT_WORKER_ID, startInstantWorker } from "./instant-worker.ts";
import { startTurnShape } from "./turn-shape.ts";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "200" },
    "no-limits": { type: "boolean", default: false },
    "no-wrangler": { type: "boolean", default: false },
    "state-in": { type: "string" },
  },
});
const rounds = Number(values.rounds);
const WARM_UP = 10;
/** Quiet time before each measurement: the previous request's after-response work is done by then. */
const SETTLE_MS = 20;

const server = await startInstantWorker();
const dir = mkdtempSync(join(values["state-in"] ?? tmpdir(), "frontier-edge-alone-"));
let direct: EdgeDirect | undefined;
const withWrangler = !values["no-wrangler"];
const edgePort = await freePort();
const workerUrls = [`http://127.0.0.1:${server.httpPort}`];
const limitVars: Record<string, string> = {
  WORKER_IDS: JSON.stringify(Object.fromEntries(workerUrls.map((url) => [url, INSTANT_WORKER_ID]))),
  ...(values["no-limits"] ? { TENANT_MAX_CONCURRENT: "0", TENANT_RATE_PER_MIN: "0" } : {}),
};
const edge = withWrangler
  ? await startEdge({
      port: edgePort,
      workerUrls,
      stateDir: dir,
      vars: limitVars,
      onDirect: (d) => {
        direct = d;
      },
    })
  : undefined;
const alone = await startWorkerdEdge({
  port: await freePort(),
  stateDir: join(dir, "workerd-alone"),
  vars: edgeVars(workerUrls, limitVars),
});
const pingRequest = () =>
  benchGenerateRequest({ messages: [{ role: Role.USER, content: textContent("ping") }], sampling: { maxTokens: 1 } });
// The bare shape and the direct calls send one capability signed up front (the edge signs per call).
const capability = await instantWorkerCapability();
const shape = await startTurnShape({
  workerHttpUrl: `http://127.0.0.1:${server.httpPort}`,
  workerToken: DEV_WORKER_TOKEN,
  request: pingRequest(),
  headers: capability,
});
const h2c = benchWorkerClient(`http://127.0.0.1:${server.grpcPort}`);
const grpcWeb = benchWorkerClient(`http://127.0.0.1:${server.httpPort}`, "grpc-web");
const callOptions = { headers: capability };
const samples = new Map<string, number[]>();
/** Per-turn details of this round, kept with the round's other samples (after warm-up). */
let pending: [string, number][] = [];
/** The edge whose `server-timing` and header times are kept: workerd without wrangler. */
const detailedUrl = alone.url;
const add = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);

/** One streamed continuing turn through the edge at `url`, read to its end; ms. */
async function edgeTurn(url: string, headers: Record<string, string>, messages: unknown[]): Promise<number> {
  const t0 = performance.now();
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, ...headers },
    body: JSON.stringify({ model: "m", max_tokens: 1, stream: true, messages }),
    signal: AbortSignal.timeout(30_000),
  });
  if (response.status !== 200) throw new Error(`edge answered ${response.status}: ${await response.text()}`);
  const headersAt = performance.now() - t0;
  await response.text();
  const ms = performance.now() - t0;
  if (url === detailedUrl) {
    pending.push(["edge, workerd alone: response headers", headersAt]);
    for (const [step, value] of Object.entries(parseServerTiming(response.headers.get("server-timing"))))
      pending.push([`edge, workerd alone: server-timing ${step}`, value]);
  }
  return ms;
}

function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}

/** An authenticated GET /v1/models: workerd and the key check, nothing else; ms. */
async function floor(url: string, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  await (await fetch(`${url}/v1/models`, { headers: { "x-api-key": BENCH_KEY, ...headers } })).text();
  return performance.now() - t0;
}

/** One Generate straight to the instant worker, read to its end; ms. */
async function generate(client: BenchWorkerClient): Promise<number> {
  const started = performance.now();
  for await (const _ of client.generate(pingRequest(), callOptions)) {
    // drain
  }
  return performance.now() - started;
}

try {
  if (withWrangler && !direct) throw new Error("wrangler's debug log did not name workerd's own listener");
  const proxied = `http://127.0.0.1:${edgePort}`;
  // One conversation per path, each with its own hint: every turn continues an idle session.
  const wranglerPaths = direct
    ? [
        { name: "edge via wrangler dev", url: proxied, headers: {}, messages: [] as unknown[] },
        {
          name: "edge, wrangler's workerd directly",
          url: direct.url,
          headers: direct.headers,
          messages: [] as unknown[],
        },
      ]
    : [];
  const conversations = [
    ...wranglerPaths,
    { name: "edge, workerd alone (no wrangler)", url: alone.url, headers: {}, messages: [] as unknown[] },
    { name: "the turn's shape in workerd, no Frontier code", url: shape.url, headers: {}, messages: [] as unknown[] },
  ].map((c) => ({ ...c, headers: { ...c.headers, "x-claude-code-session-id": crypto.randomUUID() } }));
  for (let i = 0; i < rounds + WARM_UP; i++) {
    const keep = i >= WARM_UP;
    const times: Record<string, number> = {};
    for (const c of conversations) {
      await settle();
      c.messages.push({ role: "user", content: "ping" });
      times[c.name] = await edgeTurn(c.url, c.headers, c.messages).catch((error: unknown) => {
        throw new Error(`${c.name}: ${String(error)}`, { cause: error });
      });
      c.messages.push({ role: "assistant", content: "pong" });
    }
    await settle();
    times["worker h2c directly"] = await generate(h2c);
    await settle();
    times["worker gRPC-Web (HTTP/1.1) directly"] = await generate(grpcWeb);
    await settle();
    if (direct) {
      times["floor: GET /v1/models, wrangler's workerd directly"] = await floor(direct.url, direct.headers);
      await settle();
    }
    times["floor: GET /v1/models, workerd alone"] = await floor(alone.url, {});
    const details = pending;
    pending = [];
    if (!keep) continue;
    for (const [name, ms] of [...Object.entries(times), ...details]) add(name, ms);
    const base = times["worker h2c directly"] ?? Number.NaN;
    for (const c of conversations) add(`overhead: ${c.name} - h2c`, (times[c.name] ?? Number.NaN) - base);
  }
  process.stdout.write(
    `instant worker, ${rounds} rounds${values["no-limits"] ? ", tenant limiter off" : ""}, state in ${dir}\n`,
  );
  const signing = await signingCostMs(1000);
  process.stdout.write(`capability signing (Node, per call, key cached): p50 ${signing.toFixed(3)} ms\n`);
  for (const [name, ms] of samples) {
    const q = (p: number) => percentile(ms, p).toFixed(2);
    process.stdout.write(`${name.padEnd(44)} p50 ${q(50)} ms (p25 ${q(25)}, p75 ${q(75)}, p90 ${q(90)})\n`);
  }
  const over = (name: string) => percentile(samples.get(`overhead: ${name} - h2c`) ?? [], 50);
  const edgeOver = over("edge, workerd alone (no wrangler)");
  const shapeOver = over("the turn's shape in workerd, no Frontier code");
  process.stdout.write(
    `ratio: edge in workerd alone / bare turn shape, over h2c, p50: ${edgeOver.toFixed(2)} / ${shapeOver.toFixed(2)} ms = ${(edgeOver / shapeOver).toFixed(2)}x (goal <= 1.5x)\n`,
  );
} finally {
  await alone.stop();
  await shape.stop();
  if (edge) await stopChild(edge);
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
