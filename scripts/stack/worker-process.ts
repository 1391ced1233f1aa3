/** A GPU worker as a child process of the local stack (tsx gpu-worker/main.ts), and its supervisor. */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { withWorkerMemorySettings } from "../../gpu-worker/config/process-memory.ts";
import { DEV_MODE_FLAG } from "../../shared/dev-secrets.ts";
import { freePort, REPO_ROOT, stopChild } from "./processes.ts";

export interface WorkerHandle {
  /** FRONTIER_WORKER_ID. */
  id: string;
  process: ChildProcess;
  grpcUrl: string;
  httpUrl: string;
  /** The operations listener (/metrics, /healthz, /readyz) when FRONTIER_METRICS_PORT is set. */
  opsUrl: string | undefined;
  /** Everything the worker wrote to stderr (its decision log), across restarts. */
  logs: string[];
  /** How many times the stack restarted it after it died (supervised stacks only). */
  restarts: number;
}

export async function startWorker(
  env: Record<string, string>,
  verbose = false,
  logs: string[] = [],
  /** Start it with the memory settings of every deployment (false: glibc's and V8's defaults, to compare). */
  memorySettings = true,
): Promise<WorkerHandle> {
  // Local development: the worker may use the public development secrets (shared/dev-secrets.ts).
  const given = {
    ...process.env,
    [DEV_MODE_FLAG]: "1",
    // Chosen outside the kernel's ephemeral range (freePort): a supervised restart binds the same
    // ports again, and no other process's listen(0) or connection can have taken them meanwhile.
    FRONTIER_WORKER_GRPC_PORT: String(await freePort()),
    FRONTIER_WORKER_HTTP_PORT: String(await freePort()),
    ...env,
  };
  // The memory settings every deployment starts a worker with (glibc's arenas, V8's young generation).
  const childEnv: NodeJS.ProcessEnv = memorySettings ? withWorkerMemorySettings(given) : given;
  const child = spawn(
    process.execPath,
    // tsx as a loader, not its CLI: the child is the worker itself, so a signal (a test's SIGKILL) reaches it.
    ["--import", "tsx", join(REPO_ROOT, "gpu-worker/main.ts")],
    {
      cwd: REPO_ROOT,
      env: childEnv,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  createInterface({ input: child.stderr! }).on("line", (line) => {
    logs.push(line);
    if (verbose) process.stderr.write(`[worker] ${line}\n`);
  });
  let startTimer: ReturnType<typeof setTimeout> | undefined;
  const ready = await new Promise<{ grpcPort: number; httpPort: number; opsPort?: number }>((resolveReady, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (line.startsWith('{"ready":true')) resolveReady(JSON.parse(line) as { grpcPort: number; httpPort: number });
      else if (verbose) process.stderr.write(`[worker] ${line}\n`);
    });
    child.once("exit", (code) =>
      reject(new Error(`GPU worker exited with ${code} before it was ready:\n${logs.slice(-20).join("\n")}`)),
    );
    startTimer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`GPU worker not ready within 120 s:\n${logs.slice(-20).join("\n")}`));
    }, 120_000);
    startTimer.unref();
  }).finally(() => clearTimeout(startTimer));
  // With FRONTIER_TLS_CERT_FILE both RPC listeners serve TLS only.
  const scheme = childEnv.FRONTIER_TLS_CERT_FILE ? "https" : "http";
  return {
    id: env.FRONTIER_WORKER_ID ?? "worker-1",
    process: child,
    grpcUrl: `${scheme}://127.0.0.1:${ready.grpcPort}`,
    httpUrl: `${scheme}://127.0.0.1:${ready.httpPort}`,
    opsUrl: ready.opsPort === undefined ? undefined : `http://127.0.0.1:${ready.opsPort}`,
    logs,
    restarts: 0,
  };
}

/**
 * Keep a worker running: when its process exits while the stack is up, start it again with the same
 * environment and ports (backing off 1 s, 2 s, … up to 30 s while it keeps failing to start).
 */
export function superviseWorker(
  handle: WorkerHandle,
  env: Record<string, string>,
  stopping: () => boolean,
  verbose: boolean,
): void {
  const ports = {
    FRONTIER_WORKER_GRPC_PORT: new URL(handle.grpcUrl).port,
    FRONTIER_WORKER_HTTP_PORT: new URL(handle.httpUrl).port,
  };
  const watch = (child: ChildProcess): void => {
    child.once("exit", (code, signal) => {
      if (stopping()) return;
      process.stderr.write(`[stack] ${handle.id} exited (${signal ?? `code ${code}`}); restarting it\n`);
      void restart(1000);
    });
  };
  const restart = async (delayMs: number): Promise<void> => {
    await new Promise((r) => setTimeout(r, delayMs).unref());
    if (stopping()) return;
    try {
      const fresh = await startWorker({ ...env, ...ports }, verbose, handle.logs);
      if (stopping()) {
        await stopChild(fresh.process);
        return;
      }
      handle.process = fresh.process;
      handle.restarts++;
      watch(fresh.process);
    } catch (error) {
      process.stderr.write(`[stack] ${handle.id} failed to restart: ${String(error)}\n`);
      void restart(Math.min(delayMs * 2, 30_000));
    }
  };
  watch(handle.process);
}
