/**
 * A worker stopped with SIGTERM drains itself through the edge with its own pool credential (issue
 * 30 item 2: no worker holds the admin token): real edge (wrangler dev), two real worker processes
 * with a credential each (no shared pool token), one shared checkpoint directory. The stopped
 * worker's session is handed over and continues on the other worker; the stopped worker exits 0.
 */

import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../edge/tenancy/auth.ts";
import { freePort, type Stack, startStack, startWorker, stopChild, type WorkerHandle } from "../../scripts/stack.ts";
import { adminWorkers, ToolLoop, until, workerOf } from "../support/pool-stack.ts";

let stack: Stack;
let stateDir = "";
let second: WorkerHandle;
const workerEnv = (id: string) => ({
  FRONTIER_CONTEXT_SIZE: "4096",
  FRONTIER_SEQUENCES: "2",
  FRONTIER_ANCHOR_MIN_TOKENS: "64",
  FRONTIER_STATE_DIR: join(stateDir, id),
  FRONTIER_CHECKPOINT_DIR: join(stateDir, "checkpoints"),
});

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "frontier-self-drain-"));
  const [port1, port2] = [await freePort(), await freePort()];
  const [token1, token2] = [randomBytes(24).toString("hex"), randomBytes(24).toString("hex")];
  stack = await startStack({
    workers: 1,
    pool: true,
    supervise: false,
    edgeStateDir: join(stateDir, "edge"),
    sharedCheckpointDir: join(stateDir, "checkpoints"),
    workerEnvFor: (id) => ({ ...workerEnv(id), FRONTIER_WORKER_HTTP_PORT: String(port1), FRONTIER_POOL_TOKEN: token1 }),
    edgeVars: {
      // As in a deployment: no shared pool token, one credential per worker.
      POOL_TOKEN_SHA256: "",
      POOL_WORKER_TOKENS: JSON.stringify({
        "worker-1": { sha256: await sha256Hex(token1), url: `http://127.0.0.1:${port1}`, capacity: 2 },
        "worker-2": { sha256: await sha256Hex(token2), url: `http://127.0.0.1:${port2}`, capacity: 2 },
      }),
    },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  second = await startWorker({
    ...workerEnv("worker-2"),
    FRONTIER_EDGE_URL: stack.edgeUrl,
    FRONTIER_HEARTBEAT_MS: "500",
    FRONTIER_WORKER_ID: "worker-2",
    FRONTIER_WORKER_HTTP_PORT: String(port2),
    FRONTIER_POOL_TOKEN: token2,
  });
  const up = async () =>
    (await adminWorkers(stack.edgeUrl)).filter((w) => /^worker-[12]$/.test(w.id) && w.state === "up").length === 2;
  expect(await until(up)).toBe(true);
}, 240_000);

afterAll(async () => {
  await Promise.all([stack?.stop(), second && stopChild(second.process)]);
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe("a worker's self-drain on SIGTERM", () => {
  it("hands its session over with its own credential, exits 0, and the session continues on the other worker", async () => {
    const loop = new ToolLoop("You look words up.", "Define: kappa");
    const first = await loop.turn(stack.edgeUrl);
    expect(first.status).toBe(200);
    const workers = [...stack.workers, second];
    const owner = await workerOf(workers, first.requestId);
    const survivor = workers.find((w) => w !== owner);
    if (!owner || !survivor) throw new Error("the first turn's worker was not found in the logs");

    const exited = once(owner.process, "exit");
    owner.process.kill("SIGTERM");
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    expect(owner.logs.some((l) => /worker self-drain done moved=1/.test(l))).toBe(true);
    expect(owner.logs.some((l) => /worker drained .*handedOver=1/.test(l))).toBe(true);

    const next = await loop.turn(stack.edgeUrl);
    expect(next.status).toBe(200);
    expect(next.route).toMatch(/epoch=2/);
    expect(await workerOf([survivor], next.requestId)).toBe(survivor);
  }, 120_000);
});
