/**
 * Reproduction of hinted placement (issue 42 item 4; docs/operations/faults.md): two workers without a shared checkpoint store (hosts without S3);
 * worker-1 has 2 sequences and a queue of 1. Hinted conversations (x-claude-code-session-id) with one
 * system + tools:
 *   A) conversation 1, then (after a heartbeat) conversations 2..7 one at a time: where each lands
 *      and its cache decision (the anchor of system + tools is on conversation 1's worker);
 *   B) worker-1 saturated (two long turns running, one queued: its queue is full), worker-2 idle: 12 more hinted
 *      conversations: where each lands and its status.
 * Run from the worktree: node --import tsx /tmp/edge-faults/hinted.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "./stack.ts";

const KEY = "sk-frontier-local";
const ADMIN = "frontier-dev-admin-token-change-me";
const stateDir = mkdtempSync(join(tmpdir(), "edge-faults-hinted-"));
const stack = await startStack({
  workers: 2,
  supervise: false,
  sharedCheckpointDir: false,
  edgeStateDir: join(stateDir, "edge"),
  workerEnv: { FRONTIER_CONTEXT_SIZE: "16384", FRONTIER_ANCHOR_MIN_TOKENS: "64" },
  workerEnvFor: (id) => ({
    FRONTIER_STATE_DIR: join(stateDir, id),
    ...(id === "worker-1"
      ? { FRONTIER_SEQUENCES: "2", FRONTIER_MAX_QUEUE: "1", FRONTIER_TENANT_MAX_QUEUE: "1" }
      : { FRONTIER_SEQUENCES: "4" }),
  }),
});
type W = { id: string; state: string; queueDepth: number; activeRequests: number; prefixes: string[] };
const workers = async (): Promise<W[]> => {
  const res = await fetch(`${stack.edgeUrl}/admin/workers`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = (await res.json()) as { regions: { workers: W[] }[] };
  return body.regions.flatMap((r) => r.workers);
};
const until = async (check: () => Promise<boolean>) => {
  for (let i = 0; i < 300; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};
const system = `You are a careful assistant for the dictionary project. ${"Answer in short sentences, cite the entry, never guess. ".repeat(12)}`;
const tools = [
  {
    name: "lookup",
    description: "Look a word up.",
    input_schema: { type: "object", properties: { word: { type: "string", maxLength: 8 } } },
  },
];
const post = (body: unknown, hint: string, signal?: AbortSignal) =>
  fetch(`${stack.edgeUrl}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": KEY,
      "anthropic-version": "2023-06-01",
      "x-claude-code-session-id": hint,
    },
    body: JSON.stringify(body),
    signal,
  });
const workerOf = async (requestId: string) => {
  for (let i = 0; i < 100; i++) {
    const w = stack.workers.find((w) => w.logs.some((l) => l.includes(`request=${requestId}`)));
    if (w) return w.id;
    await new Promise((r) => setTimeout(r, 50));
  }
  return "?";
};
async function conversation(hint: string, question: string) {
  const res = await post(
    { model: "m", max_tokens: 4, system, tools, messages: [{ role: "user", content: question }] },
    hint,
  );
  const requestId = res.headers.get("request-id") ?? "";
  await res.text();
  const cache = /decision=([\w-]+)/.exec(res.headers.get("x-frontier-cache") ?? "")?.[1] ?? "-";
  return {
    status: res.status,
    worker: await workerOf(requestId),
    route: res.headers.get("x-frontier-route") ?? "",
    cache,
  };
}
try {
  await until(async () => (await workers()).filter((w) => w.state === "up").length === 2);
  if (process.env.ONLY_B !== "1") {
    const first = await conversation(crypto.randomUUID(), "Define apple.");
    console.log(`A) conversation 1: ${first.worker} (${first.route}; ${first.cache})`);
    const holder = first.worker;
    await until(async () =>
      (await workers()).some((w) => w.id === holder && w.prefixes.length > 0 && w.activeRequests === 0),
    );
    await new Promise((r) => setTimeout(r, 1200)); // a heartbeat after the anchor: no placement pending
    const rows: string[] = [];
    for (let i = 2; i <= 7; i++) {
      const r = await conversation(crypto.randomUUID(), `Define word ${i}.`);
      rows.push(`   conversation ${i}: ${r.worker} (${r.route}; ${r.cache})`);
      await new Promise((r) => setTimeout(r, 1200));
    }
    console.log(rows.join("\n"));
    const onHolder = rows.filter((r) => r.includes(`: ${holder} `)).length;
    console.log(`A) ${onHolder} of 6 later conversations on the anchor holder ${holder}`);
  }

  // B) saturate worker-1: three long follow-ups on hinted sessions placed on it.
  const properties = Object.fromEntries(
    Array.from({ length: 60 }, (_, i) => [`p${i}`, { type: "string", minLength: 128, maxLength: 128 }]),
  );
  const long = {
    model: "m",
    max_tokens: 12000,
    stream: true,
    tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
    tool_choice: { type: "tool", name: "essay" },
  };
  const pinned: string[] = [];
  for (let i = 0; pinned.length < 3 && i < 80; i++) {
    const hint = crypto.randomUUID();
    // A system prompt of its own: placed by load alone (a shared one would follow its holder).
    const r = await post(
      { model: "m", max_tokens: 2, system: `pin ${i}`, messages: [{ role: "user", content: "x" }] },
      hint,
    );
    const id = r.headers.get("request-id") ?? "";
    await r.text();
    if ((await workerOf(id)) === "worker-1") pinned.push(hint);
    await new Promise((r) => setTimeout(r, 300));
  }
  const abort = new AbortController();
  const running: Promise<unknown>[] = [];
  const sendLong = (hint: string) =>
    post(
      {
        ...long,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: "ok" },
          { role: "user", content: "Write the essay." },
        ],
      },
      hint,
      abort.signal,
    )
      .then(async (r) => {
        const id = r.headers.get("request-id") ?? "";
        console.log(`   long turn: HTTP ${r.status} ${r.headers.get("x-frontier-route")} on ${await workerOf(id)}`);
        const text = await r.text();
        console.log(
          `   long turn ended: ${text.length} bytes, last: ${text.trim().split("\n").slice(-2).join(" | ").slice(0, 200)}`,
        );
      })
      .catch(() => "");
  // One at a time: each finds the previous ones running (two sequences, then the queue).
  for (const [i, hint] of pinned.entries()) {
    running.push(sendLong(hint));
    await until(async () => (await workers()).some((w) => w.id === "worker-1" && w.activeRequests > i));
  }
  const saturated = await until(async () =>
    (await workers()).some((w) => w.id === "worker-1" && w.activeRequests >= 1 && w.queueDepth >= 1),
  );
  const view = (await workers()).map((w) => `${w.id}: active ${w.activeRequests}, queue ${w.queueDepth}`).join("; ");
  console.log(`B) worker-1 saturated: ${saturated} (${pinned.length} long turns sent to it) — ${view}`);
  const placed: string[] = [];
  for (let i = 0; i < 12; i++) {
    const r = await conversation(crypto.randomUUID(), `Define saturated ${i}.`);
    placed.push(`${r.worker}:${r.status}`);
  }
  console.log(`B) 12 hinted new conversations while worker-1 is saturated: ${placed.join(" ")}`);
  abort.abort();
  await Promise.all(running);
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
