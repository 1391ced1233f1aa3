/**
 * A worker that dies while it runs a request (issue 14: one poisoned request killed both workers of a
 * pool in 0.1 s, through failover): the edge marks it down and answers that request with a 500
 * (`x-should-retry: false`) instead of running it on the other worker; the stack restarts the dead
 * worker on its port and the pool takes it back (new boot id), so the next requests are served.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack, type WorkerHandle } from "../../scripts/stack.ts";
import { postJson } from "../support/api.ts";
import { adminWorkers, until } from "../support/pool-stack.ts";

let stack: Stack;
let stateDir = "";

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-worker-lost-"));
  stack = await startStack({
    workers: 2,
    edgeStateDir: join(stateDir, "edge"),
    workerEnv: { FRONTIER_CONTEXT_SIZE: "8192", FRONTIER_STATE_DIR: join(stateDir, "worker") },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  expect(
    await until(async () => (await adminWorkers(stack.edgeUrl)).filter((w) => w.state === "up").length === 2),
  ).toBe(true);
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** A forced call whose grammar needs ~1,400 bytes of JSON: still sampling when the worker is killed. */
function longCall(hint: string): Promise<Response> {
  const properties = Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => [`p${i}`, { type: "string", minLength: 32, maxLength: 32 }]),
  );
  return postJson(
    `${stack.edgeUrl}/v1/messages`,
    {
      model: "m",
      max_tokens: 20_000,
      tools: [{ name: "essay", input_schema: { type: "object", properties, required: Object.keys(properties) } }],
      tool_choice: { type: "tool", name: "essay" },
      messages: [{ role: "user", content: `Write the essay ${hint}.` }],
    },
    { headers: { "x-claude-code-session-id": hint } },
  );
}

const decisions = (w: WorkerHandle) => w.logs.filter((l) => /live kv cache miss|live continuation/.test(l)).length;

describe("a worker dying mid-request", () => {
  it("is not retried elsewhere, is marked down, restarted by the stack and taken back by the pool", async () => {
    const before = stack.workers.map(decisions);
    const pending = longCall(crypto.randomUUID());
    let dying: WorkerHandle | undefined;
    expect(
      await until(() => {
        dying = stack.workers.find((w, i) => decisions(w) > (before[i] ?? 0));
        return dying !== undefined;
      }),
    ).toBe(true);
    if (!dying) throw new Error("no worker took the request");
    const survivor = stack.workers.find((w) => w !== dying) as WorkerHandle;
    const survivorDecisions = decisions(survivor);
    const dyingPid = dying.process.pid;
    await new Promise((r) => setTimeout(r, 300)); // sampling
    dying.process.kill("SIGKILL");

    const res = await pending;
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    expect(res.status, JSON.stringify(body)).toBe(500);
    expect(body.error.type).toBe("api_error");
    expect(body.error.message).toMatch(/not retried/);
    expect(res.headers.get("x-should-retry")).toBe("false");
    // The other worker never saw the request.
    expect(decisions(survivor)).toBe(survivorDecisions);

    // Supervised: the stack restarts it (same ports), and it heartbeats back into the pool.
    const restarted = dying;
    expect(await until(() => restarted.restarts === 1, 600)).toBe(true);
    expect(restarted.process.pid).not.toBe(dyingPid);
    expect(
      await until(async () => (await adminWorkers(stack.edgeUrl)).filter((w) => w.state === "up").length === 2, 300),
    ).toBe(true);
    const next = await postJson(`${stack.edgeUrl}/v1/messages`, {
      model: "m",
      max_tokens: 4,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(next.status).toBe(200);
  });
});
