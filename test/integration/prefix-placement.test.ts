/**
 * Issue 45 item 2 with two real workers (separate checkpoint stores): a new conversation whose first
 * user message shares a long prefix with a conversation worker-1 holds lands on worker-1 and copies
 * that KV (`decision=shared-prefix`), though worker-2 also holds the tenant's (empty) system + tools
 * prefix and is less loaded. By the system + tools fingerprint alone (before item 2) it went to
 * worker-2, the least loaded holder of that fingerprint, and prefilled the whole message cold.
 *
 * The shape: worker-1 has 2 sequences, worker-2 has 4. Two conversations fill worker-1 (load 1.0),
 * so the next two go to worker-2 (load 0.5); the long-prefix conversation then still fits worker-1
 * within the placement margin (1.0 ≤ 0.5 + 0.5), and only the longer prefix makes it the choice.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, startStack } from "../../scripts/stack.ts";
import { postJson } from "../support/api.ts";
import { adminWorkers, until, workerOf } from "../support/pool-stack.ts";

let stack: Stack;
let stateDir = "";

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-prefix-placement-"));
  stack = await startStack({
    workers: 2,
    supervise: false,
    sharedCheckpointDir: false,
    edgeStateDir: join(stateDir, "edge"),
    workerEnv: { FRONTIER_CONTEXT_SIZE: "8192" },
    workerEnvFor: (id) => ({
      FRONTIER_STATE_DIR: join(stateDir, id),
      FRONTIER_SEQUENCES: id === "worker-1" ? "2" : "4",
    }),
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

const CONTEXT = `Project context for the agents of this repository. ${"The build uses make; tests live in test/; keep functions small and names plain. ".repeat(40)}`;

/** A new conversation (its own hint, no system, no tools): its worker, cache decision and cached tokens. */
async function conversation(message: string) {
  const res = await postJson(
    `${stack.edgeUrl}/v1/messages`,
    { model: "m", max_tokens: 2, temperature: 0, messages: [{ role: "user", content: message }] },
    { headers: { "x-claude-code-session-id": crypto.randomUUID() } },
  );
  await res.text();
  const worker = await workerOf(stack.workers, res.headers.get("request-id") ?? "");
  const cache = res.headers.get("x-frontier-cache") ?? "";
  return {
    status: res.status,
    worker: worker?.id,
    decision: /decision=([\w-]+)/.exec(cache)?.[1],
    cached: Number(/cached=(\d+)/.exec(cache)?.[1] ?? 0),
  };
}

/** No turn running and a heartbeat since (the pool's pending placements reset, residents reported). */
async function quiet(): Promise<void> {
  const idle = async () => {
    const res = await fetch(`${stack.edgeUrl}/admin/workers`, {
      headers: { authorization: "Bearer frontier-dev-admin-token-change-me" },
    });
    const body = (await res.json()) as { regions: { workers: { activeRequests: number }[] }[] };
    return body.regions.flatMap((r) => r.workers).every((w) => w.activeRequests === 0);
  };
  expect(await until(idle)).toBe(true);
  await new Promise((r) => setTimeout(r, 1500));
}

describe("placement by the longest shared prefix, two workers", () => {
  it("a conversation sharing a long first message with one on worker-1 lands there and copies its KV", async () => {
    const first = await conversation(`${CONTEXT}\nTask: fix the flaky test.`);
    expect(first).toMatchObject({ status: 200, worker: "worker-1", decision: "cold" });
    await quiet();
    expect(await conversation("Say hello.")).toMatchObject({ status: 200, worker: "worker-1" });
    await quiet();
    // worker-1's two sequences hold a session each: the next ones go to worker-2.
    expect(await conversation("Say goodbye.")).toMatchObject({ status: 200, worker: "worker-2" });
    await quiet();
    expect(await conversation("Say thanks.")).toMatchObject({ status: 200, worker: "worker-2" });
    await quiet();
    const advertised = (await adminWorkers(stack.edgeUrl)).find((w) => w.id === "worker-1")?.prefixes ?? [];
    expect(advertised.length).toBeGreaterThan(2);

    const second = await conversation(`${CONTEXT}\nTask: rename the helper.`);
    expect(second).toMatchObject({ status: 200, worker: "worker-1", decision: "shared-prefix" });
    expect(second.cached).toBeGreaterThan(CONTEXT.length / 8);
  }, 180_000);
});
