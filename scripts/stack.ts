/**
 * Starts the local stack as real processes on loopback: N GPU workers (tsx gpu-worker/main.ts) and
 * the edge in workerd (wrangler dev). Used by `npm start`, the integration/e2e tests and the bench.
 * Benchmarks can also run the same edge in workerd without wrangler (`edgeDirect`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { DEV_DIGESTS, DEV_ID_SECRET, DEV_MODE_FLAG, DEV_WORKER_TOKEN } from "../shared/dev-secrets.ts";
import { startWorkerdEdge } from "./workerd-edge.ts";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

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

export interface StackOptions {
  workers?: number;
  edgePort?: number;
  /** Extra environment for the workers (FRONTIER_*). */
  workerEnv?: Record<string, string>;
  /** Extra `[vars]` for the edge (e.g. API_KEYS). */
  edgeVars?: Record<string, string>;
  /** Where wrangler persists Durable Object state. */
  edgeStateDir?: string;
  /** Echo child output to this process's stderr. */
  verbose?: boolean;
  /**
   * Workers register with and heartbeat to the edge's pool (FRONTIER_EDGE_URL), besides being its
   * static WORKER_URLS. Default: on with more than one worker.
   */
  pool?: boolean;
  /**
   * One checkpoint directory all workers share (FRONTIER_CHECKPOINT_DIR). Default with more than one
   * worker: `<edge state>/checkpoints`; `false`: none (each worker keeps its own, e.g. with S3).
   */
  sharedCheckpointDir?: string | false;
  /** Environment of one worker (after `workerEnv`), e.g. its own FRONTIER_STATE_DIR. */
  workerEnvFor?: (workerId: string) => Record<string, string>;
  /**
   * Restart a worker that dies, on the same ports (so static WORKER_URLS stay right; pooled
   * workers re-register with a new boot id). Default on; tests that kill workers on purpose and
   * watch the pool react turn it off.
   */
  supervise?: boolean;
  /**
   * Also run the same edge in workerd without wrangler (scripts/workerd-edge.ts: no dev proxy,
   * inspector or request log) as Stack.edgeDirect, with its own Durable Object state. Benchmarks
   * only, with static WORKER_URLS (workers do not register with it).
   */
  edgeDirect?: boolean;
  /**
   * A PEM CA bundle the edge's outbound fetch trusts besides the public CAs (workers serving TLS
   * with a private CA): passed to wrangler dev as NODE_EXTRA_CA_CERTS, which Miniflare adds to
   * workerd's `internet` service as `tlsOptions.trustedCertificates` (docs/deployment.md).
   */
  edgeTrustedCaFile?: string;
  /** Receives each line wrangler dev (and workerd under it) writes: its request log, uncaught errors. */
  onEdgeLine?: (line: string) => void;
}

/** An edge in workerd reached without `wrangler dev`'s proxy, and the headers it requires. */
export interface EdgeDirect {
  url: string;
  headers: Record<string, string>;
}

export interface Stack {
  edgeUrl: string;
  /** With `edgeDirect`: the same edge in workerd without wrangler. */
  edgeDirect?: EdgeDirect;
  /** The `wrangler dev` process (its launcher; workerd is its child). */
  edgePid: number;
  workers: WorkerHandle[];
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolvePort(address.port) : reject(new Error("no port")),
      );
    });
  });
}

export async function startWorker(
  env: Record<string, string>,
  verbose = false,
  logs: string[] = [],
): Promise<WorkerHandle> {
  // Local development: the worker may use the public development secrets (shared/dev-secrets.ts).
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    [DEV_MODE_FLAG]: "1",
    FRONTIER_WORKER_GRPC_PORT: "0",
    FRONTIER_WORKER_HTTP_PORT: "0",
    ...env,
  };
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
function superviseWorker(
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

/** The edge's local-development settings: FRONTIER_DEV=1 and the public development secrets. */
const DEV_EDGE_VARS: Record<string, string> = {
  [DEV_MODE_FLAG]: "1",
  ID_SECRET: DEV_ID_SECRET,
  WORKER_TOKEN: DEV_WORKER_TOKEN,
  API_KEYS: JSON.stringify({ [DEV_DIGESTS.apiKey]: "local" }),
  POOL_TOKEN_SHA256: DEV_DIGESTS.pool,
  ADMIN_TOKEN_SHA256: DEV_DIGESTS.admin,
};

/** The edge's variables: the development settings, the workers, then the caller's. */
export function edgeVars(workerUrls: readonly string[], vars: Record<string, string> = {}): Record<string, string> {
  return { ...DEV_EDGE_VARS, WORKER_URLS: workerUrls.join(","), ...vars };
}

/**
 * The edge's variables go to wrangler as an env file, which it binds as secrets: `wrangler dev`
 * prints `--var` values in its binding table, secrets only as "(hidden)".
 */
function writeEnvFile(stateDir: string, vars: Record<string, string>): string {
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, "edge-vars.env");
  const lines = Object.entries(vars).map(([key, value]) => {
    if (/['\n\r]/.test(value)) throw new Error(`edge var ${key}: a single quote or newline cannot go in an env file`);
    return `${key}='${value}'`;
  });
  writeFileSync(path, `${lines.join("\n")}\n`, { mode: 0o600 });
  return path;
}

export async function startEdge(options: {
  port: number;
  workerUrls: string[];
  stateDir: string;
  vars?: Record<string, string>;
  verbose?: boolean;
  /** NODE_EXTRA_CA_CERTS for wrangler dev: CAs the edge's fetch trusts besides the public ones. */
  trustedCaFile?: string | undefined;
  onLine?: ((line: string) => void) | undefined;
  /** Receives workerd's own URL (wrangler's debug log, `reloadComplete`). */
  onDirect?: (direct: EdgeDirect) => void;
}): Promise<ChildProcess> {
  const vars = edgeVars(options.workerUrls, options.vars);
  const args = [
    join(REPO_ROOT, "node_modules/wrangler/bin/wrangler.js"),
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(options.port),
    "--persist-to",
    options.stateDir,
    "--inspector-port",
    String(await freePort()),
    "--env-file",
    writeEnvFile(options.stateDir, vars),
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CI: "true",
      NO_COLOR: "1",
      ...(options.onDirect ? { WRANGLER_LOG: "debug" } : {}),
      ...(options.trustedCaFile ? { NODE_EXTRA_CA_CERTS: options.trustedCaFile } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const tail: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on("line", (line) => {
      if (options.onDirect && line.includes('"reloadComplete"')) {
        const port = /"userWorkerUrl":\{[^}]*"port":"(\d+)"/.exec(line)?.[1];
        const secret = /"MF-Proxy-Shared-Secret":"([^"]+)"/.exec(line)?.[1];
        if (port && secret)
          options.onDirect({ url: `http://127.0.0.1:${port}`, headers: { "MF-Proxy-Shared-Secret": secret } });
      }
      options.onLine?.(line);
      tail.push(line);
      if (tail.length > 50) tail.shift();
      if (options.verbose) process.stderr.write(`[edge] ${line}\n`);
    });
  }
  const url = `http://127.0.0.1:${options.port}/`;
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}:\n${tail.join("\n")}`);
    try {
      const res = await fetch(url, { method: "HEAD" });
      if (res.status === 200) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGTERM");
  throw new Error(`wrangler dev did not answer on ${url} within 90 s:\n${tail.join("\n")}`);
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const workers: WorkerHandle[] = [];
  const count = options.workers ?? 1;
  const port = options.edgePort ?? (await freePort());
  const stateDir = options.edgeStateDir ?? join(REPO_ROOT, ".state/edge");
  const shared =
    options.sharedCheckpointDir === false
      ? undefined
      : (options.sharedCheckpointDir ?? (count > 1 ? join(stateDir, "checkpoints") : undefined));
  const pool = options.pool ?? count > 1;
  let stopping = false;
  try {
    // Workers start in parallel; they heartbeat to the edge (retrying until it is up) when pooled.
    const envs = Array.from({ length: count }, (_, i) => ({
      FRONTIER_WORKER_ID: `worker-${i + 1}`,
      ...(shared ? { FRONTIER_CHECKPOINT_DIR: shared } : {}),
      ...(pool ? { FRONTIER_EDGE_URL: `http://127.0.0.1:${port}`, FRONTIER_HEARTBEAT_MS: "500" } : {}),
      ...options.workerEnv,
      ...options.workerEnvFor?.(`worker-${i + 1}`),
    }));
    const started = await Promise.allSettled(envs.map((env) => startWorker(env, options.verbose)));
    for (const result of started) if (result.status === "fulfilled") workers.push(result.value);
    const failed = started.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    if (options.supervise ?? true) {
      for (const [i, worker] of workers.entries()) {
        superviseWorker(worker, envs[i] ?? {}, () => stopping, options.verbose ?? false);
      }
    }
    const workerUrls = workers.map((w) => w.httpUrl);
    // Capabilities are signed for a worker id: the edge learns its static workers' ids here.
    const vars = {
      WORKER_IDS: JSON.stringify(Object.fromEntries(workers.map((w) => [w.httpUrl, w.id]))),
      ...options.edgeVars,
    };
    const edge = await startEdge({
      port,
      workerUrls,
      stateDir,
      vars,
      verbose: options.verbose,
      trustedCaFile: options.edgeTrustedCaFile,
      onLine: options.onEdgeLine,
    });
    const direct = options.edgeDirect
      ? await startWorkerdEdge({
          port: await freePort(),
          stateDir: join(stateDir, "workerd-edge"),
          vars: edgeVars(workerUrls, vars),
        }).catch(async (error: unknown) => {
          await stopChild(edge);
          throw error;
        })
      : undefined;
    return {
      edgeUrl: `http://127.0.0.1:${port}`,
      edgePid: edge.pid ?? 0,
      ...(direct ? { edgeDirect: { url: direct.url, headers: {} } } : {}),
      workers,
      async stop() {
        stopping = true;
        await Promise.all([direct?.stop(), stopChild(edge), ...workers.map((w) => stopChild(w.process))]);
      },
    };
  } catch (error) {
    stopping = true;
    await Promise.all(workers.map((w) => stopChild(w.process)));
    throw error;
  }
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolveExit) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolveExit();
    });
    child.kill("SIGTERM");
  });
}
