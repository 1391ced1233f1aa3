/**
 * Where the edge's CPU goes on a turn: a V8 CPU profile of the edge's isolate in workerd (no
 * wrangler) while it serves continuing streamed turns from an instant worker (as in
 * bench/edge/edge-alone.ts), summed by function (self time) and by the edge's folders.
 *   `tsx bench/edge/edge-profile.ts [--turns 300] [--top 30]`
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { edgeVars, freePort } from "../../scripts/stack.ts";
import { startWorkerdEdge } from "../../scripts/workerd-edge.ts";
import { BENCH_KEY } from "../clients/edge-client.ts";
import { INSTANT_WORKER_ID, startInstantWorker } from "./instant-worker.ts";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "300" },
    top: { type: "string", default: "30" },
    callers: { type: "string" },
  },
});
const turns = Number(values.turns);
/** The sampling interval (Profiler.setSamplingInterval, µs) in ms. */
const SAMPLE_MS = 0.1;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const server = await startInstantWorker();
const workerUrls = [`http://127.0.0.1:${server.httpPort}`];
const inspectorPort = await freePort();
const edge = await startWorkerdEdge({
  port: await freePort(),
  stateDir: mkdtempSync(join(tmpdir(), "frontier-edge-profile-")),
  vars: edgeVars(workerUrls, { WORKER_IDS: JSON.stringify({ [workerUrls[0] as string]: INSTANT_WORKER_ID }) }),
  inspectorPort,
});
const hint = crypto.randomUUID();
const messages: unknown[] = [];
async function turn(): Promise<void> {
  messages.push({ role: "user", content: "ping" });
  const response = await fetch(`${edge.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, "x-claude-code-session-id": hint },
    body: JSON.stringify({ model: "m", max_tokens: 1, stream: true, messages }),
  });
  if (response.status !== 200) throw new Error(`edge answered ${response.status}: ${await response.text()}`);
  await response.text();
  messages.push({ role: "assistant", content: "pong" });
  await new Promise((resolve) => setTimeout(resolve, 20)); // the after-response work settles
}

try {
  for (let i = 0; i < 20; i++) await turn();
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as {
    id: string;
    title: string;
    webSocketDebuggerUrl: string;
  }[];
  // Miniflare names the user worker "core:user:<name>" (the name is empty when run from a bundle).
  const target = targets.find((t) => t.id.startsWith("core:user:"));
  if (!target) throw new Error(`no inspector target for the edge: ${JSON.stringify(targets)}`);
  const inspector = await connect(target.webSocketDebuggerUrl);
  await inspector.call("Profiler.enable");
  await inspector.call("Profiler.setSamplingInterval", { interval: 100 });
  await inspector.call("Profiler.start");
  const started = performance.now();
  for (let i = 0; i < turns; i++) await turn();
  const wallMs = performance.now() - started;
  const { profile } = (await inspector.call("Profiler.stop")) as { profile: Profile };
  inspector.close();
  report(profile, wallMs);
} finally {
  await edge.stop();
  await server.close();
}

function report(profile: Profile, wallMs: number): void {
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    // Counted, not timed: on a loaded machine a sample's time delta includes the time the thread was
    // descheduled, which lands on whatever ran last; counts follow the time the thread ran.
    self.set(id, (self.get(id) ?? 0) + SAMPLE_MS);
  }
  const byFunction = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)" || functionName === "(program)") continue;
    busy += ms;
    const where = url === "" ? "" : ` ${url.split("/").pop()}:${lineNumber + 1}`;
    const key = `${functionName || "(anonymous)"}${where}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
  }
  const perTurn = (ms: number) => (ms / turns).toFixed(3);
  process.stdout.write(
    `${turns} turns in ${(wallMs / 1000).toFixed(1)} s; isolate busy ${perTurn(busy)} ms per turn (JS + what V8 attributes to it)\n`,
  );
  if (values.callers) callers(profile, self, values.callers);
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top));
  for (const [name, ms] of top) process.stdout.write(`${perTurn(ms).padStart(8)} ms  ${name}\n`);
}

async function connect(
  url: string,
): Promise<{ call(method: string, params?: object): Promise<unknown>; close(): void }> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, (result: unknown) => void>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result);
  });
  return {
    call(method, params = {}) {
      const id = next++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve) => waiting.set(id, resolve));
    },
    close: () => socket.close(),
  };
}

/** Self time of the functions named `name`, by their callers' chains (three frames up). */
function callers(profile: Profile, self: Map<number, number>, name: string): void {
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node);
  const chains = new Map<string, number>();
  for (const node of profile.nodes) {
    if (node.callFrame.functionName !== name) continue;
    const frames: string[] = [];
    for (let p = parent.get(node.id); p && frames.length < 3; p = parent.get(p.id))
      frames.push(`${p.callFrame.functionName || "(anonymous)"}:${p.callFrame.lineNumber + 1}`);
    const key = frames.join(" < ");
    chains.set(key, (chains.get(key) ?? 0) + (self.get(node.id) ?? 0));
  }
  for (const [chain, ms] of [...chains].sort((a, b) => b[1] - a[1]).slice(0, 12))
    process.stdout.write(`${(ms / turns).toFixed(3).padStart(8)} ms  ${name} < ${chain}\n`);
}
