/**
 * Reproduction (issue 42 item 3): WORKERS=2, a stream in flight, `kill -STOP` the worker decoding it.
 * Prints how the client's stream ends (or that it is still open after 35 s), the pool's view of the
 * worker, where the next new session goes, and how long SIGCONT + a heartbeat take to bring it back.
 * Run from the worktree: node --import tsx /tmp/edge-faults/sigstop.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startStack } from "./stack.ts";

const KEY = "sk-frontier-local";
const ADMIN = "frontier-dev-admin-token-change-me";
const stateDir = mkdtempSync(join(tmpdir(), "edge-faults-sigstop-"));
const t = () => (performance.now() / 1000).toFixed(2);
const stack = await startStack({
  workers: 2,
  supervise: false,
  edgeStateDir: join(stateDir, "edge"),
  workerEnv: { FRONTIER_CONTEXT_SIZE: "16384", FRONTIER_STATE_DIR: join(stateDir, "worker") },
  edgeVars: JSON.parse(process.env.EDGE_VARS ?? "{}"),
});
const workers = async () => {
  const res = await fetch(`${stack.edgeUrl}/admin/workers`, { headers: { authorization: `Bearer ${ADMIN}` } });
  const body = (await res.json()) as { regions: { workers: { id: string; state: string }[] }[] };
  return body.regions
    .flatMap((r) => r.workers)
    .map((w) => `${w.id}=${w.state}`)
    .join(" ");
};
const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${stack.edgeUrl}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": KEY, "anthropic-version": "2023-06-01", ...headers },
    body: JSON.stringify(body),
  });
try {
  for (let i = 0; i < 200 && !(await workers()).match(/worker-1=up.*worker-2=up|worker-2=up.*worker-1=up/); i++)
    await new Promise((r) => setTimeout(r, 100));
  console.log(`[${t()}] pool: ${await workers()}`);
  const properties = Object.fromEntries(
    Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
  );
  const res = await post({
    model: "m",
    max_tokens: 20000,
    stream: true,
    tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
    tool_choice: { type: "tool", name: "essay" },
    messages: [{ role: "user", content: "Write the essay." }],
  });
  const requestId = res.headers.get("request-id") ?? "";
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("input_json_delta")) text += decoder.decode((await reader.read()).value);
  const worker = stack.workers.find((w) => w.logs.some((l) => l.includes(`request=${requestId}`)));
  if (!worker) throw new Error(`no worker logged ${requestId}`);
  worker.process.kill("SIGSTOP");
  const stopped = performance.now();
  console.log(`[${t()}] streaming ${requestId}; SIGSTOP ${worker.id} (pid ${worker.process.pid})`);
  let tail = "";
  let ended = false;
  const reading = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        return;
      }
      tail += decoder.decode(value);
    }
  })().catch((e) => console.log("read failed", String(e)));
  const limit = Number(process.env.WAIT_S ?? "35") * 1000;
  while (!ended && performance.now() - stopped < limit) await new Promise((r) => setTimeout(r, 100));
  const s = ((performance.now() - stopped) / 1000).toFixed(1);
  const events = [...tail.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
  const last =
    tail
      .trim()
      .split("\n\n")
      .filter((e) => !e.includes("event: ping"))
      .at(-1) ?? "";
  console.log(
    ended
      ? `[${t()}] stream ended ${s} s after SIGSTOP; events after it: ${[...new Set(events)].join(",")}; last: ${last.replace(/\n/g, " | ").slice(0, 400)}`
      : `[${t()}] stream STILL OPEN ${s} s after SIGSTOP (events after it: ${events.length}: ${[...new Set(events)].join(",")})`,
  );
  console.log(`[${t()}] pool right after: ${await workers()}`);
  const next = await post(
    { model: "m", max_tokens: 4, messages: [{ role: "user", content: "hi" }] },
    { "x-claude-code-session-id": crypto.randomUUID() },
  );
  const nextId = next.headers.get("request-id") ?? "";
  await next.text();
  const took = stack.workers.find((w) => w.logs.some((l) => l.includes(`request=${nextId}`)));
  console.log(
    `[${t()}] next new session: HTTP ${next.status}, route ${next.headers.get("x-frontier-route")}, on ${took?.id ?? "?"}`,
  );
  worker.process.kill("SIGCONT");
  const cont = performance.now();
  for (let i = 0; i < 200 && !(await workers()).includes(`${worker.id}=up`); i++)
    await new Promise((r) => setTimeout(r, 50));
  console.log(
    `[${t()}] SIGCONT; ${worker.id} up again after ${((performance.now() - cont) / 1000).toFixed(2)} s: ${await workers()}`,
  );
  void reading;
} finally {
  for (const w of stack.workers) w.process.kill("SIGCONT");
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
