/**
 * The load workload's own stack, as `WORKERS=n npm start` runs it: the edge in workerd (wrangler
 * dev), n pooled worker processes (heartbeats every 500 ms, one shared checkpoint directory) on the
 * generated model, one API key per tenant. And the CPU-bound loops of a contended host, started and
 * killed by their PIDs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../../edge/tenancy/auth.ts";
import { type Stack, startStack } from "../../../scripts/stack.ts";
import { DEV_API_KEY } from "../../../shared/dev-secrets.ts";
import { reapWorkers } from "../../reap-workers.ts";
import type { LoadSettings } from "./load-settings.ts";
import { readPool } from "./pool-sampler.ts";

export interface LoadStack {
  stack: Stack;
  /** API key of tenant i. */
  apiKeys: string[];
  stop(): Promise<void>;
}

/** Tenant 0 is the local development key (tenant `local`); the others get keys of their own. */
function tenantKeys(tenants: number): string[] {
  return Array.from({ length: tenants }, (_, i) => (i === 0 ? DEV_API_KEY : `sk-frontier-load-tenant-${i}`));
}

export async function startLoadStack(
  settings: LoadSettings,
  modelPath: string,
  progress: (m: string) => void,
): Promise<LoadStack> {
  const stateDir = mkdtempSync(join(tmpdir(), "frontier-bench-load-"));
  const apiKeys = tenantKeys(settings.tenants);
  const digests = Object.fromEntries(
    await Promise.all(apiKeys.map(async (key, i) => [await sha256Hex(key), i === 0 ? "local" : `load-${i}`])),
  );
  progress(`load: starting the edge + ${settings.workers} workers × ${settings.sequences} sequences`);
  const stack = await startStack({
    workers: settings.workers,
    pool: true,
    edgeStateDir: join(stateDir, "edge"),
    sharedCheckpointDir: join(stateDir, "checkpoints"),
    workerEnv: {
      FRONTIER_MODEL_PATH: modelPath,
      FRONTIER_CONTEXT_SIZE: String(settings.contextSize),
      FRONTIER_SEQUENCES: String(settings.sequences),
      FRONTIER_MAX_QUEUE: String(settings.maxQueue),
    },
    workerEnvFor: (id) => ({ FRONTIER_STATE_DIR: join(stateDir, id) }),
    edgeVars: { API_KEYS: JSON.stringify(digests) },
    verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
  }).catch((error: unknown) => {
    rmSync(stateDir, { recursive: true, force: true });
    throw error;
  });
  const stop = async () => {
    await stack.stop();
    for (const worker of stack.workers) await reapWorkers(join(stateDir, worker.id));
    rmSync(stateDir, { recursive: true, force: true });
  };
  try {
    // Every worker has registered with the pool (its heartbeat row, by id) before the first turn.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ids = (await readPool(stack.edgeUrl).catch(() => [])).filter((w) => w.state === "up").map((w) => w.id);
      if (new Set(ids).size >= settings.workers) break;
      if (Date.now() > deadline)
        throw new Error(`only ${ids.length} of ${settings.workers} workers registered in 60 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { stack, apiKeys, stop };
}

/** `n` busy loops (`sh -c 'while :; do :; done'`), each stopped by its own PID. */
export function startContention(n: number): { pids: number[]; stop(): void } {
  const children: ChildProcess[] = Array.from({ length: n }, () =>
    spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore" }),
  );
  return {
    pids: children.flatMap((c) => (c.pid === undefined ? [] : [c.pid])),
    stop() {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
