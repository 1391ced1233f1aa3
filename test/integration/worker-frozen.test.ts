/**
 * Issue 42 item 3, against two real worker processes and the edge in workerd: a worker that freezes
 * mid-stream (SIGSTOP: its sockets stay open, nothing answers, like a partitioned host) or dies
 * mid-stream (SIGKILL). The client's stream ends with the protocol's error event — for the frozen one
 * once the idle deadline (here 4 s) passes — the worker is marked down at once (the pool's heartbeat
 * timeout is a minute here, so nothing but the edge's mark could have put it down), the next new
 * session goes to the other worker, and the worker's next heartbeat (after SIGCONT, or after a
 * restart) brings it back. On main the frozen worker's client stream was still open 30 s later.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack, startWorker, stopChild, type WorkerHandle } from "../../scripts/stack.ts";
import { postJson } from "../support/api.ts";
import { adminWorkers, until, workerOf } from "../support/pool-stack.ts";
import { decodeSseStream } from "../support/sse-decoder.ts";

const IDLE_MS = 4000;
let stack: Stack;
let stateDir = "";
const workerEnv = (dir: string) => ({ FRONTIER_CONTEXT_SIZE: "16384", FRONTIER_STATE_DIR: join(dir, "worker") });
/** Processes this file started besides the stack's (a restarted worker). */
const started: WorkerHandle[] = [];

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-worker-frozen-"));
  stack = await startStack({
    workers: 2,
    supervise: false,
    edgeStateDir: join(stateDir, "edge"),
    workerEnv: workerEnv(stateDir),
    edgeVars: {
      // Generous: the test is about the idle deadline, and a busy machine must not fail a start over.
      WORKER_CONNECT_TIMEOUT_MS: "20000",
      WORKER_FIRST_EVENT_TIMEOUT_MS: "20000",
      WORKER_IDLE_TIMEOUT_MS: String(IDLE_MS),
      HEARTBEAT_TIMEOUT_MS: "60000",
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  expect(await until(async () => (await upWorkers()).length === 2)).toBe(true);
}, 240_000);

afterAll(async () => {
  for (const w of stack?.workers ?? []) w.process.kill("SIGCONT");
  await Promise.all(started.map((w) => stopChild(w.process)));
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const upWorkers = async () => (await adminWorkers(stack.edgeUrl)).filter((w) => w.state === "up").map((w) => w.id);
const stateOf = async (id: string) => (await adminWorkers(stack.edgeUrl)).find((w) => w.id === id)?.state;

/** A streamed forced call of 30 96-character strings (a short prompt, a long answer): still sampling when its worker is stopped. */
async function longStream(): Promise<{ requestId: string; events: AsyncGenerator<{ event: string; data: string }> }> {
  const properties = Object.fromEntries(
    Array.from({ length: 30 }, (_, i) => [`p${i}`, { type: "string", minLength: 96, maxLength: 96 }]),
  );
  const res = await postJson(
    `${stack.edgeUrl}/v1/messages`,
    {
      model: "m",
      max_tokens: 12_000,
      stream: true,
      tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
      tool_choice: { type: "tool", name: "essay" },
      messages: [{ role: "user", content: `Write the essay ${crypto.randomUUID()}.` }],
    },
    { headers: { "x-claude-code-session-id": crypto.randomUUID() } },
  );
  expect(res.status).toBe(200);
  expect(res.headers.get("x-frontier-route")).not.toContain("failover");
  return { requestId: res.headers.get("request-id") ?? "", events: decodeSseStream(res.body as ReadableStream) };
}

/** Read until the call's arguments stream (the worker is decoding), then hand the rest back. */
async function untilDecoding(events: AsyncGenerator<{ event: string; data: string }>): Promise<void> {
  // next() by hand: leaving a for-await would close the stream.
  for (let e = await events.next(); !e.done; e = await events.next())
    if (e.value.event === "content_block_delta") return;
  throw new Error("the stream ended before decoding");
}

/** The rest of the stream: its non-ping events, the last one's data. */
async function rest(events: AsyncGenerator<{ event: string; data: string }>) {
  const seen: string[] = [];
  let last = "";
  for await (const e of events) {
    if (e.event === "ping") continue;
    seen.push(e.event);
    last = e.data;
  }
  return { seen, last: JSON.parse(last || "{}") as { type?: string; error?: { type: string; message: string } } };
}

/** The worker running the stream: the only one that saw the request. */
async function streamingWorker(requestId: string): Promise<WorkerHandle> {
  const found = await workerOf(stack.workers, requestId);
  if (!found) throw new Error("no worker took the stream");
  expect(stack.workers.filter((w) => w.logs.some((l) => l.includes(`request=${requestId}`)))).toHaveLength(1);
  return found;
}

/** A new conversation (a fresh hint): the worker that served it. */
async function newSessionWorker(): Promise<string | undefined> {
  const res = await postJson(
    `${stack.edgeUrl}/v1/messages`,
    { model: "m", max_tokens: 4, messages: [{ role: "user", content: "hi" }] },
    { headers: { "x-claude-code-session-id": crypto.randomUUID() } },
  );
  expect(res.status).toBe(200);
  await res.text();
  return (await workerOf(stack.workers, res.headers.get("request-id") ?? ""))?.id;
}

describe("a worker that stops answering mid-stream", () => {
  it("SIGSTOP: the stream ends with the error event after the idle deadline, the worker is down at once, SIGCONT brings it back", async () => {
    const { requestId, events } = await longStream();
    await untilDecoding(events);
    const frozen = await streamingWorker(requestId);
    const other = stack.workers.find((w) => w !== frozen) as WorkerHandle;
    frozen.process.kill("SIGSTOP");
    try {
      const stopped = performance.now();
      const { seen, last } = await rest(events);
      const seconds = ((performance.now() - stopped) / 1000).toFixed(1);
      process.stderr.write(`[worker-frozen] stream ended ${seconds} s after SIGSTOP (idle deadline ${IDLE_MS} ms)\n`);
      expect(seen.at(-1)).toBe("error");
      expect(seen).not.toContain("message_stop");
      expect(last.error?.type).toBe("api_error");
      expect(last.error?.message).toMatch(new RegExp(`stopped responding.*within ${IDLE_MS} ms`));
      // Marked down by the edge (the heartbeat timeout is 60 s), and new sessions go to the other worker.
      expect(await stateOf(frozen.id)).toBe("down");
      expect(await newSessionWorker()).toBe(other.id);
    } finally {
      frozen.process.kill("SIGCONT");
    }
    // Its next heartbeat marks it up again.
    expect(await until(async () => (await stateOf(frozen.id)) === "up")).toBe(true);
  }, 120_000);

  it("SIGKILL: the stream ends with the error event at once, the worker is down at once, its restart brings it back", async () => {
    const { requestId, events } = await longStream();
    await untilDecoding(events);
    const dying = await streamingWorker(requestId);
    const other = stack.workers.find((w) => w !== dying) as WorkerHandle;
    dying.process.kill("SIGKILL");
    const { seen, last } = await rest(events);
    expect(seen.at(-1)).toBe("error");
    expect(last.error?.type).toBe("api_error");
    expect(last.error?.message).toMatch(/stopped while running this request/);
    // On main a worker that died mid-stream stayed up in the pool until its heartbeats timed out.
    expect(await until(async () => (await stateOf(dying.id)) === "down", 50)).toBe(true);
    expect(await newSessionWorker()).toBe(other.id);
    const restarted = await startWorker(
      {
        ...workerEnv(stateDir),
        FRONTIER_WORKER_ID: dying.id,
        FRONTIER_EDGE_URL: stack.edgeUrl,
        FRONTIER_HEARTBEAT_MS: "500",
      },
      process.env.FRONTIER_TEST_VERBOSE === "1",
    );
    started.push(restarted);
    expect(await until(async () => (await stateOf(dying.id)) === "up")).toBe(true);
  }, 120_000);
});
