/**
 * Issue 42, items 1 and 2, through a real edge and one real worker process (4 sequences):
 * - turns waiting for a sequence whose clients go away leave the worker's queue at once and are
 *   never started (no park, no restore), while the turns holding the sequences go on;
 * - 24 concurrent agents, each a 3-turn forced tool loop with tool pauses and its own system prompt
 *   (long enough to save an anchor), in two waves of fresh conversations, while two CPU-bound
 *   loops contend for the cores: every turn completes, and every turn after an agent's first
 *   continues suffix-only (the `x-frontier-cache` header). On main this stalled: sequences free,
 *   turns queued, nothing running until the worker's 600 s wall clock.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_WORKER_TOKEN } from "../../gpu-worker/config.ts";
import { GenerateRequestSchema, Role, WorkerService } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { type Stack, startStack } from "../../scripts/stack.ts";
import { CAPABILITY_HEADER } from "../../shared/capability.ts";
import { newSessionId } from "../../shared/ids.ts";
import { postJson, randomHint, TEST_METRICS_TOKEN } from "../support/api.ts";
import { devCapability, devSessionIdKey } from "../support/dev-capability.ts";
import { until } from "../support/pool-stack.ts";
import { parsePromText, type Sample, sampleSum } from "../support/prom-text.ts";

const SEQUENCES = 4;
const AGENTS = 24;
const TURNS = 3;
/** A tool-result turn's suffix (end of the call turn, the result, the next assistant prefix) is tens of tokens. */
const MAX_SUFFIX = 80;
/** A turn that takes longer than this has stalled (the worker's own wall clock is 600 s). */
const TURN_DEADLINE_MS = 60_000;

let stack: Stack;
let stateDir = "";
const contention: ChildProcess[] = [];

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-queue-"));
  stack = await startStack({
    edgeStateDir: join(stateDir, "edge"),
    workerEnv: {
      FRONTIER_CONTEXT_SIZE: "8192",
      FRONTIER_SEQUENCES: String(SEQUENCES),
      FRONTIER_ANCHOR_MIN_TOKENS: "256",
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
      FRONTIER_METRICS_PORT: "0",
      FRONTIER_METRICS_TOKEN: TEST_METRICS_TOKEN,
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
}, 240_000);

afterAll(async () => {
  // Only the loops this file started.
  for (const child of contention) if (child.pid !== undefined) process.kill(child.pid, "SIGKILL");
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

function worker() {
  const w = stack.workers[0];
  if (!w?.opsUrl) throw new Error("no worker with an operations listener");
  return { ...w, opsUrl: w.opsUrl };
}

async function scrape(): Promise<Sample[]> {
  const res = await fetch(`${worker().opsUrl}/metrics`, { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
  return parsePromText(await res.text());
}

const gauge = async (name: string) => sampleSum(await scrape(), name);

const tool = {
  name: "lookup",
  description: "Look a word up in the dictionary.",
  input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } }, required: ["word"] },
};

/** A forced call of `n` 32-character strings: the grammar keeps the model sampling for a while. */
function longCall(n: number): Record<string, unknown> {
  const properties = Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
  );
  return {
    model: "m",
    max_tokens: 8000,
    stream: true,
    tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
    tool_choice: { type: "tool", name: "essay" },
    messages: [{ role: "user", content: `Write the essay ${crypto.randomUUID()}.` }],
  };
}

/** A streaming request whose client can go away: its response (headers arrive with the worker's first event). */
async function openStream(body: Record<string, unknown>) {
  const controller = new AbortController();
  const res = await postJson(`${stack.edgeUrl}/v1/messages`, body, {
    headers: { "x-claude-code-session-id": randomHint() },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  const requestId = res.headers.get("request-id") ?? "";
  // Keep reading in the background, so a running turn is never held up by its reader.
  const drained = (async () => {
    const reader = res.body?.getReader();
    try {
      while (reader && !(await reader.read()).done) {}
    } catch {
      // aborted
    }
  })();
  return { requestId, abort: () => controller.abort(), drained };
}

/** A Generate call straight to the worker (as the edge makes it), cancelled by `signal`; settles when the call ends. */
async function directGenerate(signal: AbortSignal): Promise<void> {
  const token: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${DEV_WORKER_TOKEN}`);
    return next(request);
  };
  const client = createClient(WorkerService, createGrpcTransport({ baseUrl: worker().grpcUrl, interceptors: [token] }));
  const sessionId = newSessionId();
  const request = create(GenerateRequestSchema, {
    requestId: `direct-${sessionId.slice(0, 8)}`,
    tenantId: "local",
    sessionId,
    sessionIdKey: await devSessionIdKey("local", sessionId),
    idKinds: { message: "msg", toolCall: "toolu", serverToolCall: "srvtoolu" },
    conversation: { messages: [{ role: Role.USER, content: [{ block: { case: "text", value: { text: "hi" } } }] }] },
    sampling: { maxTokens: 2, temperature: 0 },
  });
  const headers = { [CAPABILITY_HEADER]: await devCapability(["generate"], "local", sessionId) };
  try {
    for await (const _ of client.generate(request, { headers, signal })) {
    }
  } catch {
    // cancelled
  }
}

describe("a turn whose client leaves while it waits for a sequence", () => {
  it("leaves the queue at once and is never started; the running turns go on", async () => {
    const before = await scrape();
    const running = await Promise.all(Array.from({ length: SEQUENCES }, () => openStream(longCall(40))));
    expect(await until(async () => (await gauge("frontier:num_requests_running")) >= SEQUENCES, 200, 100)).toBe(true);
    const waiting = await Promise.all(
      Array.from({ length: 3 }, () =>
        openStream({ model: "m", max_tokens: 8, stream: true, messages: [{ role: "user", content: "quick" }] }),
      ),
    );
    expect(await until(async () => (await gauge("frontier:num_requests_waiting")) === 3, 200, 50)).toBe(true);
    const aborted = Date.now();
    for (const w of waiting) w.abort();
    // Gone from the queue as soon as the cancellation reaches the worker (the edge cancels its call
    // when it finds the client gone: at its next write to the quiet stream, a keep-alive).
    expect(await until(async () => (await gauge("frontier:num_requests_waiting")) === 0, 200, 100)).toBe(true);
    const emptied = Date.now() - aborted;
    const cancelledAt = waiting.map((w) => {
      const line = worker().logs.find((l) => l.includes(`request=${w.requestId}`) && l.includes("request cancelled"));
      return line ? Date.parse(line.slice(0, 24)) - aborted : Number.NaN;
    });
    process.stdout.write(
      `[queue-under-load] 3 waiters aborted: the worker logged their cancellation ${cancelledAt.join(", ")} ms later; queue seen empty after ${emptied} ms\n`,
    );
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(delta("frontier:request_queue_aborted_total")).toBe(3);
    // Never started: nothing parked for them, nothing restored, no turn of theirs finished.
    expect(delta("frontier:num_preemptions_total")).toBe(0);
    expect(delta("frontier:session_restores_total")).toBe(0);
    expect(delta("frontier:request_success_total")).toBe(0);
    expect(await gauge("frontier:num_requests_running")).toBe(SEQUENCES);
    for (const w of waiting) {
      const mine = worker().logs.filter((l) => l.includes(`request=${w.requestId}`));
      expect(mine.some((l) => l.includes("request cancelled"))).toBe(true);
      expect(mine.some((l) => l.includes("turn finished"))).toBe(false);
    }
    // The same straight to the worker (no edge in between): cancelled calls leave its queue at once.
    const direct = new AbortController();
    const calls = [directGenerate(direct.signal), directGenerate(direct.signal)];
    expect(await until(async () => (await gauge("frontier:num_requests_waiting")) === 2, 200, 50)).toBe(true);
    const cancelled = Date.now();
    direct.abort();
    expect(await until(async () => (await gauge("frontier:num_requests_waiting")) === 0, 200, 10)).toBe(true);
    process.stdout.write(
      `[queue-under-load] 2 Generate calls cancelled at the worker: queue seen empty after ${Date.now() - cancelled} ms\n`,
    );
    await Promise.all(calls);
    expect(
      sampleSum(await scrape(), "frontier:request_queue_aborted_total") -
        sampleSum(before, "frontier:request_queue_aborted_total"),
    ).toBe(5);
    // The long turns' clients leave too: their sequences come back, and the worker serves the next turn.
    for (const r of running) r.abort();
    await Promise.all([...running, ...waiting].map((r) => r.drained));
    expect(await until(async () => (await gauge("frontier:num_requests_running")) === 0, 200, 100)).toBe(true);
    const next = await postJson(`${stack.edgeUrl}/v1/messages`, {
      model: "m",
      max_tokens: 4,
      messages: [{ role: "user", content: "still there?" }],
    });
    expect(next.status).toBe(200);
  }, 180_000);
});

interface TurnOutcome {
  status: number;
  /** The answer made a tool call (else the turn was cut by max_tokens before one was complete). */
  toolUse: boolean;
  decision: string;
  cached: number;
  prompt: number;
}

/** One agent: a 3-turn forced tool loop on its own system prompt, with a tool pause between turns. */
async function agent(wave: number, index: number): Promise<TurnOutcome[]> {
  const system = `You are agent ${wave}.${index}. ${"Follow the house rules for dictionary lookups carefully. ".repeat(6)}${crypto.randomUUID()}`;
  const headers = { "x-claude-code-session-id": randomHint() };
  const messages: { role: string; content: unknown }[] = [{ role: "user", content: `Look up word ${index}.` }];
  const outcomes: TurnOutcome[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const body = { model: "m", max_tokens: 48, system, tools: [tool], tool_choice: { type: "any" }, messages };
    const res = await postJson(`${stack.edgeUrl}/v1/messages`, body, {
      headers,
      signal: AbortSignal.timeout(TURN_DEADLINE_MS),
    });
    const header = res.headers.get("x-frontier-cache") ?? "";
    const field = (name: string) => new RegExp(`${name}=([\\w-]+)`).exec(header)?.[1] ?? "";
    const message = (await res.json()) as { content?: { type: string; id?: string }[] };
    outcomes.push({
      status: res.status,
      toolUse: (message.content ?? []).some((b) => b.type === "tool_use"),
      decision: field("decision"),
      cached: Number(field("cached")),
      prompt: Number(field("prompt")),
    });
    if (res.status !== 200) break;
    const content = message.content ?? [];
    messages.push({ role: "assistant", content });
    const calls = content.filter((b) => b.type === "tool_use");
    messages.push({
      role: "user",
      content:
        calls.length > 0
          ? calls.map((c) => ({ type: "tool_result", tool_use_id: c.id, content: `definition ${turn}` }))
          : "Go on.",
    });
    // The tool runs: 50–450 ms, as in the report.
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.floor(Math.random() * 400)));
  }
  return outcomes;
}

describe("24 concurrent tool-loop agents on 4 sequences, CPU contended", () => {
  it("complete every turn, in two waves of fresh conversations, each turn after the first suffix-only", async () => {
    for (let i = 0; i < 2; i++) contention.push(spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }));
    for (let wave = 0; wave < 2; wave++) {
      const started = performance.now();
      const results = await Promise.allSettled(Array.from({ length: AGENTS }, (_, i) => agent(wave, i)));
      const failures = results.filter((r) => r.status === "rejected").map((r) => String(r.reason));
      if (failures.length > 0) {
        const metrics = await scrape();
        const read = (name: string) => sampleSum(metrics, name);
        throw new Error(
          `wave ${wave}: ${failures.length} agents failed (first: ${failures[0]}); worker: waiting=${read("frontier:num_requests_waiting")} running=${read("frontier:num_requests_running")} free=${read("frontier:sequences_free")} resident=${read("frontier:sessions_resident")}`,
        );
      }
      const outcomes = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      const turns = outcomes.flat();
      expect(turns.length, `wave ${wave}: turns`).toBe(AGENTS * TURNS);
      expect(
        turns.filter((t) => t.status !== 200),
        `wave ${wave}: failed turns`,
      ).toEqual([]);
      // Tool loops: (almost) every answer is a forced call (one cut by max_tokens continues with a user turn).
      expect(turns.filter((t) => t.toolUse).length, `wave ${wave}: tool calls`).toBeGreaterThanOrEqual(
        turns.length * 0.9,
      );
      for (const agentTurns of outcomes) {
        expect(agentTurns[0]?.decision).toMatch(/^(cold|checkpoint)$/);
        for (const t of agentTurns.slice(1)) {
          expect(t.decision, `wave ${wave}: a continued turn`).toMatch(
            /^(live-tool-ids|live-text-prefix|live-token-prefix|checkpoint)$/,
          );
          expect(t.prompt - t.cached, `wave ${wave}: suffix-only (${t.decision})`).toBeGreaterThan(0);
          expect(t.prompt - t.cached, `wave ${wave}: suffix-only (${t.decision})`).toBeLessThan(MAX_SUFFIX);
        }
      }
      const decisions = new Map<string, number>();
      for (const t of turns) decisions.set(t.decision, (decisions.get(t.decision) ?? 0) + 1);
      process.stdout.write(
        `[queue-under-load] wave ${wave}: ${turns.length} turns (${turns.filter((t) => t.toolUse).length} tool calls) in ${Math.round(performance.now() - started)} ms; ${[...decisions].map(([d, n]) => `${d}=${n}`).join(" ")}\n`,
      );
    }
    const metrics = await scrape();
    expect(sampleSum(metrics, "frontier:num_requests_waiting")).toBe(0);
    // Sessions were parked and restored along the way (24 agents on 4 sequences).
    expect(sampleSum(metrics, "frontier:num_preemptions_total")).toBeGreaterThan(0);
  }, 300_000);
});
