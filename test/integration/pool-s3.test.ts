/**
 * Two pooled workers as on two hosts: separate state directories, no shared checkpoint directory,
 * only an S3-compatible bucket (s3rver on a loopback port). The session's worker is killed; a
 * tool-results-only request continues on the other worker from the checkpoint it pulled from S3.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEV_ID_SECRET } from "../../gpu-worker/config.ts";
import { type Stack, startStack, type WorkerHandle } from "../../scripts/stack.ts";
import { verifyId } from "../../shared/ids.ts";
import { adminWorkers, logLines, ToolLoop, until, workerOf } from "../support/pool-stack.ts";
import { S3_CREDENTIALS, startS3, type TestS3 } from "../support/s3-server.ts";

let s3: TestS3;
let stack: Stack;
let stateDir = "";

beforeAll(async () => {
  s3 = await startS3();
  stateDir = mkdtempSync(join(tmpdir(), "frontier-pool-s3-"));
  stack = await startStack({
    // Workers are killed on purpose here; the test watches the pool react, not the stack restart them.
    supervise: false,
    workers: 2,
    edgeStateDir: join(stateDir, "edge"),
    sharedCheckpointDir: false,
    workerEnv: {
      FRONTIER_CONTEXT_SIZE: "4096",
      FRONTIER_SEQUENCES: "2",
      FRONTIER_CHECKPOINT_S3_URL: s3.url,
      FRONTIER_CHECKPOINT_S3_REGION: S3_CREDENTIALS.region,
      FRONTIER_CHECKPOINT_S3_ACCESS_KEY_ID: S3_CREDENTIALS.accessKeyId,
      FRONTIER_CHECKPOINT_S3_SECRET_ACCESS_KEY: S3_CREDENTIALS.secretAccessKey,
      FRONTIER_CHECKPOINT_S3_PREFIX: "pool-test",
    },
    workerEnvFor: (id) => ({ FRONTIER_STATE_DIR: join(stateDir, id) }),
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  const edgeUrl = stack.edgeUrl;
  expect(await until(async () => (await adminWorkers(edgeUrl)).filter((w) => /^worker-/.test(w.id)).length === 2)).toBe(
    true,
  );
}, 240_000);

afterAll(async () => {
  await stack?.stop();
  await s3?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe("worker pool across hosts via S3 checkpoints", () => {
  it("a killed worker's session continues on the other worker from the S3 checkpoint", async () => {
    const loop = new ToolLoop("You are the cross-host test assistant.", "Define: alpha");
    const first = await loop.turn(stack.edgeUrl);
    expect(first.status).toBe(200);
    expect(first.stopReason).toBe("tool_use");
    const owner = await workerOf(stack.workers, first.requestId);
    if (!owner) throw new Error("no worker served the first turn");
    const survivor = stack.workers.find((w) => w !== owner) as WorkerHandle;
    const session = (await verifyId(DEV_ID_SECRET, loop.pending[0] ?? "", "local"))?.session.slice(0, 8) ?? "";
    // The tool-frontier checkpoint is written (and uploaded: the write resolves after the upload).
    expect(
      await until(() => logLines(owner, `session=${session}`, /checkpoint saved reason=tool-frontier/).length > 0),
    ).toBe(true);
    owner.process.kill("SIGKILL");

    const resultsOnly = await loop.turn(stack.edgeUrl, { onlyResults: true });
    if (resultsOnly.status !== 200)
      throw new Error(`turn failed: ${resultsOnly.status} ${JSON.stringify(resultsOnly.error)}`);
    expect(resultsOnly.route).toContain("epoch=2");
    expect(resultsOnly.cache).toContain("decision=live-tool-ids");
    expect(await workerOf([survivor], resultsOnly.requestId)).toBe(survivor);
    expect(logLines(survivor, `session=${session}`, /checkpoints imported/).length).toBeGreaterThan(0);
    expect(logLines(survivor, `session=${session}`, /kv cache hit checkpoint reason=tool-frontier/).length).toBe(1);
  });
});
