/**
 * The fuzz tier (issue 14): seeded, bounded property-based bodies against both APIs of a real local
 * stack (edge in workerd, one supervised GPU worker, the tiny model). Every response must have a
 * documented status (never a 5xx), the protocol's own error shape, and a stream must end with its
 * terminal event; at the end the worker was never restarted and /healthz is 200.
 *   FRONTIER_FUZZ_RUNS (cases per route, default 700), FRONTIER_FUZZ_SEED (default 20261201).
 * A longer campaign: FRONTIER_FUZZ_RUNS=20000 npm test -- fuzz
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../scripts/stack.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { decodeSseStream } from "../support/sse-decoder.ts";
import { messagesBody, rawBody, responsesBody } from "./arbitraries.ts";
import { geminiBody } from "./gemini-arbitraries.ts";

const RUNS = Number(process.env.FRONTIER_FUZZ_RUNS || 700);
const SEED = Number(process.env.FRONTIER_FUZZ_SEED || 20261201);
/** Statuses the APIs document for a request (no 5xx but 529, which needs load this test does not make). */
const DOCUMENTED = new Set([200, 400, 404, 409, 413, 429, 529]);

let stack: Stack;
let stateDir = "";
const statuses = new Map<string, number>();
let slowest = { ms: 0, path: "", body: "" };

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-fuzz-"));
  stack = await startStack({
    workers: 1,
    edgeStateDir: join(stateDir, "edge"),
    workerEnv: {
      FRONTIER_CONTEXT_SIZE: "4096",
      FRONTIER_CHECKPOINT_BUDGET_MB: "0",
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
}, 240_000);

afterAll(async () => {
  const summary = [...statuses.entries()].sort().map(([k, v]) => `${k}=${v}`);
  process.stdout.write(`fuzz: seed=${SEED} runs=${RUNS}/api ${summary.join(" ")} slowest=${slowest.ms}ms\n`);
  process.stdout.write(`fuzz: slowest case ${slowest.path} ${slowest.body.slice(0, 2000)}\n`);
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

async function post(path: string, body: string): Promise<Response> {
  const started = Date.now();
  const key: Record<string, string> = path.startsWith("/v1beta/")
    ? { "x-goog-api-key": LOCAL_API_KEY }
    : { "x-api-key": LOCAL_API_KEY, "anthropic-version": "2023-06-01" };
  const res = await fetch(`${stack.edgeUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...key },
    body,
  });
  const ms = Date.now() - started;
  if (ms > slowest.ms) slowest = { ms, path, body };
  statuses.set(`${path}:${res.status}`, (statuses.get(`${path}:${res.status}`) ?? 0) + 1);
  return res;
}

type Check = (res: Response) => Promise<void>;

const anthropicShape: Check = async (res) => {
  expect(DOCUMENTED.has(res.status), `status ${res.status}`).toBe(true);
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    const events: { event: string; data: string }[] = [];
    for await (const e of decodeSseStream(res.body!)) events.push(e);
    const last = events.at(-1);
    expect(["message_stop", "error"]).toContain(last?.event);
    if (last?.event === "error") expect(JSON.parse(last.data).error.type).not.toBe("api_error");
    return;
  }
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status === 200) {
    expect(["message", undefined]).toContain(body.type); // count_tokens answers { input_tokens }
    return;
  }
  expect(body.type).toBe("error");
  const error = body.error as { type: unknown; message: unknown };
  expect(typeof error.type).toBe("string");
  expect(typeof error.message).toBe("string");
};

const openAiShape: Check = async (res) => {
  expect(DOCUMENTED.has(res.status), `status ${res.status}`).toBe(true);
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    const events: { event: string; data: string }[] = [];
    for await (const e of decodeSseStream(res.body!)) events.push(e);
    expect(["response.completed", "response.incomplete", "response.failed"]).toContain(events.at(-1)?.event);
    for (const e of events) if (e.event === "error") expect(JSON.parse(e.data).error?.type).not.toBe("server_error");
    return;
  }
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status === 200) {
    expect(body.object).toBe("response");
    return;
  }
  const error = body.error as Record<string, unknown>;
  expect(typeof error.message).toBe("string");
  expect(typeof error.type).toBe("string");
  expect("param" in error && "code" in error).toBe(true);
};

/** Google's shape: chunks ending with a finish reason (or an error chunk), or `{error: {code, message, status}}`. */
const googleShape: Check = async (res) => {
  // Overload is Google's 503 (Anthropic's 529).
  expect(DOCUMENTED.has(res.status) || res.status === 503, `status ${res.status}`).toBe(true);
  const body = res.headers.get("content-type")?.startsWith("text/event-stream")
    ? await streamedChunks(res)
    : ((await res.json()) as Record<string, unknown>);
  const last = Array.isArray(body) ? (body.at(-1) as Record<string, unknown> | undefined) : body;
  if (res.status === 200 && !(last && "error" in last)) {
    const candidates = last?.candidates as { finishReason?: string }[] | undefined;
    expect(typeof candidates?.[0]?.finishReason).toBe("string");
    return;
  }
  const error = last?.error as { code: unknown; message: unknown; status: unknown };
  expect(typeof error.code).toBe("number");
  expect(typeof error.message).toBe("string");
  expect(error.status).not.toBe("INTERNAL");
};

async function streamedChunks(res: Response): Promise<unknown[]> {
  const chunks: unknown[] = [];
  for await (const e of decodeSseStream(res.body!)) chunks.push(JSON.parse(e.data));
  return chunks;
}

function fuzz(path: string, body: fc.Arbitrary<string>, check: Check, runs = RUNS): Promise<void> {
  return fc.assert(
    fc.asyncProperty(body, async (raw) => {
      const worker = stack.workers[0];
      const logged = worker?.logs.length ?? 0;
      await check(await post(path, raw));
      // The worker is still the one the stack started: no request killed it.
      await new Promise((r) => setImmediate(r));
      if (worker && (worker.restarts > 0 || worker.process.exitCode !== null || worker.process.signalCode !== null)) {
        throw new Error(`the worker died on this request; its log:\n${worker.logs.slice(logged).join("\n")}`);
      }
    }),
    { seed: SEED, numRuns: runs, endOnFailure: true, verbose: 1 },
  );
}

describe("fuzzed bodies against the real stack", () => {
  it("POST /v1/messages", () => fuzz("/v1/messages", rawBody(messagesBody), anthropicShape), 30 * 60_000);
  it(
    "POST /v1/messages/count_tokens",
    () => fuzz("/v1/messages/count_tokens", rawBody(messagesBody), anthropicShape),
    30 * 60_000,
  );
  it("POST /v1/responses", () => fuzz("/v1/responses", rawBody(responsesBody), openAiShape), 30 * 60_000);
  // A third of the runs each: the Gemini API shares the pipeline, the worker and its grammars.
  it(
    "POST /v1beta/models/{model}:generateContent and :streamGenerateContent",
    async () => {
      const runs = Math.ceil(RUNS / 6);
      await fuzz("/v1beta/models/frontier-test:generateContent", rawBody(geminiBody), googleShape, runs);
      await fuzz("/v1beta/models/frontier-test:streamGenerateContent?alt=sse", rawBody(geminiBody), googleShape, runs);
    },
    30 * 60_000,
  );

  it("left the worker running (never restarted) and the stack healthy", async () => {
    expect(stack.workers.map((w) => w.restarts)).toEqual([0]);
    expect(stack.workers[0]?.process.exitCode).toBeNull();
    const health = await fetch(`${stack.edgeUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe("ok");
  });
});
