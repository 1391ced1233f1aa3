/**
 * Vitest globalSetup shared by the integration and e2e tiers: starts the real stack (GPU worker
 * process + wrangler dev) once per tier on free loopback ports and hands its URLs to the tests.
 */
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type Stack, startStack } from "../../scripts/stack.ts";
import { LOCAL_API_KEY, OTHER_TENANT_API_KEY, TEST_METRICS_TOKEN } from "./api.ts";

declare module "vitest" {
  export interface ProvidedContext {
    edgeUrl: string;
    workerGrpcUrl: string;
    workerHttpUrl: string;
    /** The worker's operations listener (/metrics, /healthz, /readyz). */
    workerOpsUrl: string;
    /** A file receiving the worker's decision log, line by line. */
    workerLogFile: string;
    /** The worker's process id: a test that sees it change (or gone) saw the worker die. */
    workerPid: number;
    /** The `wrangler dev` process's id (the launcher that starts workerd). */
    edgePid: number;
    /** A second stack (e2e only) serving a real-vocabulary family model: its edge and decision log. */
    familyEdgeUrl: string;
    familyWorkerLogFile: string;
  }
}

/** The local dev key (tenant "local") and a second tenant's key, stored as SHA-256 hashes. */
async function testApiKeys(): Promise<Record<string, string>> {
  const hash = async (key: string) =>
    Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))).toString("hex");
  return { [await hash(LOCAL_API_KEY)]: "local", [await hash(OTHER_TENANT_API_KEY)]: "other" };
}

interface TestStack {
  stack: Stack;
  logFile: string;
  stop: () => Promise<void>;
}

/** One worker (its decision log teed into a file) and wrangler dev, on free ports. */
async function launch(workerEnv: Record<string, string>): Promise<TestStack> {
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-edge-"));
  const stack = await startStack({
    workers: 1,
    edgeStateDir: stateDir,
    workerEnv: {
      FRONTIER_CONTEXT_SIZE: "65536",
      FRONTIER_SEQUENCES: "4",
      FRONTIER_STATE_DIR: join(stateDir, "worker"),
      FRONTIER_METRICS_PORT: "0",
      FRONTIER_METRICS_TOKEN: TEST_METRICS_TOKEN,
      ...workerEnv,
    },
    edgeVars: { API_KEYS: JSON.stringify(await testApiKeys()) },
    verbose: process.env.FRONTIER_TEST_VERBOSE === "1",
  });
  const worker = stack.workers[0];
  if (!worker) throw new Error("no worker started");
  const logFile = join(stateDir, "worker.log");
  appendFileSync(logFile, `${worker.logs.join("\n")}\n`);
  worker.process.stderr?.on("data", (chunk: Buffer) => appendFileSync(logFile, chunk));
  const stop = async () => {
    await stack.stop();
    rmSync(stateDir, { recursive: true, force: true });
  };
  return { stack, logFile, stop };
}

export async function setupStack(
  project: TestProject,
  workerEnv: Record<string, string>,
): Promise<() => Promise<void>> {
  const { stack, logFile, stop } = await launch(workerEnv);
  const worker = stack.workers[0];
  if (!worker) throw new Error("no worker started");
  project.provide("edgeUrl", stack.edgeUrl);
  project.provide("workerGrpcUrl", worker.grpcUrl);
  project.provide("workerHttpUrl", worker.httpUrl);
  project.provide("workerOpsUrl", worker.opsUrl ?? "");
  project.provide("workerPid", worker.process.pid ?? 0);
  project.provide("edgePid", stack.edgePid);
  project.provide("workerLogFile", logFile);
  return stop;
}

/**
 * A stack of its own (worker + wrangler dev) serving `modelPath`, for a test file that needs a
 * family model the tier's global stacks do not serve; stop it in the file's afterAll.
 */
export async function startFamilyStack(
  modelPath: string,
  workerEnv: Record<string, string> = {},
): Promise<{ edgeUrl: string; logFile: string; stop: () => Promise<void> }> {
  const { stack, logFile, stop } = await launch({ ...workerEnv, FRONTIER_MODEL_PATH: modelPath });
  return { edgeUrl: stack.edgeUrl, logFile, stop };
}

/**
 * A second stack whose worker serves `modelPath` (a real-vocabulary family model; its chat format
 * recognised from the GGUF's template), provided as `familyEdgeUrl` / `familyWorkerLogFile`.
 */
export async function setupFamilyStack(
  project: TestProject,
  modelPath: string,
  workerEnv: Record<string, string>,
): Promise<() => Promise<void>> {
  const { stack, logFile, stop } = await launch({ ...workerEnv, FRONTIER_MODEL_PATH: modelPath });
  project.provide("familyEdgeUrl", stack.edgeUrl);
  project.provide("familyWorkerLogFile", logFile);
  return stop;
}
