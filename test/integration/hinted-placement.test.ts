/**
 * Issue 42 item 4 with two real workers on separate checkpoint stores (hosts without S3): Claude
 * Code-style clients (a fresh `x-claude-code-session-id` per conversation, one system + tools) are
 * placed by the pool's rule. The second conversation lands on the worker holding the first one's
 * system + tools anchor while it has room (a checkpoint hit, not a cold prefill on the other host),
 * and none lands on a worker whose sequences all run turns and whose queue is full while the other
 * is idle. On main both went to an FNV hash of the hint: a cold miss on the other worker half the
 * time, and 529s from the saturated worker (9 of 12 in scripts/repro-hinted-placement.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../scripts/stack.ts";
import { postJson } from "../support/api.ts";
import { ADMIN_TOKEN, until, workerOf } from "../support/pool-stack.ts";

let stack: Stack;
let stateDir = "";

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-hinted-placement-"));
  stack = await startStack({
    workers: 2,
    supervise: false,
    sharedCheckpointDir: false,
    edgeStateDir: join(stateDir, "edge"),
    workerEnv: { FRONTIER_CONTEXT_SIZE: "16384", FRONTIER_ANCHOR_MIN_TOKENS: "64" },
    workerEnvFor: (id) => ({
      FRONTIER_STATE_DIR: join(stateDir, id),
      // worker-1 is small enough to saturate: 2 sequences and a queue of 1.
      ...(id === "worker-1"
        ? { FRONTIER_SEQUENCES: "2", FRONTIER_MAX_QUEUE: "1", FRONTIER_TENANT_MAX_QUEUE: "1" }
        : { FRONTIER_SEQUENCES: "4" }),
    }),
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  expect(await until(async () => (await workers()).filter((w) => w.state === "up").length === 2)).toBe(true);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

interface AdminWorker {
  id: string;
  state: string;
  queueDepth: number;
  activeRequests: number;
  prefixes: string[];
}

async function workers(): Promise<AdminWorker[]> {
  const res = await fetch(`${stack.edgeUrl}/admin/workers`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const body = (await res.json()) as { regions: { workers: AdminWorker[] }[] };
  return body.regions.flatMap((r) => r.workers);
}

const SYSTEM = `You are the dictionary project's agent. ${"Answer in short sentences, cite the entry, never guess. ".repeat(12)}`;
const TOOLS = [
  {
    name: "lookup",
    description: "Look a word up.",
    input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } } },
  },
];

function post(body: Record<string, unknown>, hint: string, signal?: AbortSignal): Promise<Response> {
  return postJson(`${stack.edgeUrl}/v1/messages`, body, { headers: { "x-claude-code-session-id": hint }, signal });
}

/** A new hinted conversation with the shared system + tools: its status, worker and cache decision. */
async function conversation(question: string) {
  const res = await post(
    { model: "m", max_tokens: 4, system: SYSTEM, tools: TOOLS, messages: [{ role: "user", content: question }] },
    crypto.randomUUID(),
  );
  await res.text();
  const worker = await workerOf(stack.workers, res.headers.get("request-id") ?? "");
  const decision = /decision=([\w-]+)/.exec(res.headers.get("x-frontier-cache") ?? "")?.[1];
  return { status: res.status, worker: worker?.id, decision };
}

/** Wait for a heartbeat with no turn running anywhere (the pool's pending placements reset). */
async function quiet(): Promise<void> {
  expect(await until(async () => (await workers()).every((w) => w.activeRequests === 0))).toBe(true);
  await new Promise((r) => setTimeout(r, 1200));
}

describe("hinted conversations across two workers", () => {
  it("the second conversation with the same system + tools lands on the anchor's worker while it has room", async () => {
    const first = await conversation("Define apple.");
    expect(first).toMatchObject({ status: 200, decision: "cold" });
    const holder = first.worker;
    expect(await until(async () => (await workers()).some((w) => w.id === holder && w.prefixes.length > 0))).toBe(true);
    await quiet();
    const second = await conversation("Define pear.");
    expect(second).toMatchObject({ status: 200, worker: holder, decision: "checkpoint" });
  }, 120_000);

  it("never goes to the worker whose sequences all run turns and whose queue is full while the other is idle", async () => {
    await quiet();
    // Three hinted conversations that live on worker-1; their long next turns fill it (2 running, 1 queued).
    const pinned: string[] = [];
    for (let i = 0; pinned.length < 3 && i < 80; i++) {
      const hint = crypto.randomUUID();
      // A system prompt of its own: placed by load alone (a shared one would follow its holder).
      const res = await post(
        { model: "m", max_tokens: 2, system: `pin ${i}`, messages: [{ role: "user", content: "x" }] },
        hint,
      );
      await res.text();
      if ((await workerOf(stack.workers, res.headers.get("request-id") ?? ""))?.id === "worker-1") pinned.push(hint);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(pinned).toHaveLength(3);
    const properties = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`p${i}`, { type: "string", minLength: 128, maxLength: 128 }]),
    );
    const long = {
      model: "m",
      max_tokens: 12_000,
      stream: true,
      tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
      tool_choice: { type: "tool", name: "essay" },
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "Write the essay." },
      ],
    };
    const abort = new AbortController();
    const running: Promise<unknown>[] = [];
    for (const [i, hint] of pinned.entries()) {
      const status = post(long, hint, abort.signal).then((r) => {
        running.push(r.text().catch(() => ""));
        return r.status;
      });
      running.push(status.catch(() => 0));
      // One at a time: each finds the previous one running (a sequence, then the queue).
      const started = await until(
        async () => ((await workers()).find((w) => w.id === "worker-1")?.activeRequests ?? 0) > i,
      );
      expect({ turn: i, started, view: started ? undefined : await workers() }).toMatchObject({ started: true });
      expect(await status).toBe(200);
    }
    try {
      const full = await until(async () => ((await workers()).find((w) => w.id === "worker-1")?.queueDepth ?? 0) >= 1);
      expect(full).toBe(true);
      const placed: string[] = [];
      for (let i = 0; i < 6; i++) {
        const c = await conversation(`Define saturated ${i}.`);
        placed.push(`${c.worker}:${c.status}`);
      }
      expect(placed).toEqual(Array(6).fill("worker-2:200"));
    } finally {
      abort.abort();
      await Promise.all(running);
    }
  }, 240_000);
});
