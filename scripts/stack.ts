/**
 * Starts the local stack as real processes on loopback: N GPU workers (tsx gpu-worker/main.ts) and
 * the edge in workerd (wrangler dev). Used by `npm start`, the integration/e2e tests and the bench.
 * Benchmarks can also run the same edge in workerd without wrangler (`edgeDirect`).
 */
import { join } from "node:path";
import { type EdgeDirect, edgeVars, startEdge } from "./stack/edge-process.ts";
import { freePort, REPO_ROOT, stopChild } from "./stack/processes.ts";
import { startWorker, superviseWorker, type WorkerHandle } from "./stack/worker-process.ts";
import { startWorkerdEdge } from "./workerd-edge.ts";

export { type EdgeDirect, edgeVars, startEdge } from "./stack/edge-process.ts";
export { freePort, REPO_ROOT, stopChild } from "./stack/processes.ts";
export { startWorker, type WorkerHandle } from "./stack/worker-process.ts";

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

export interface Stack {
  edgeUrl: string;
  /** With `edgeDirect`: the same edge in workerd without wrangler. */
  edgeDirect?: EdgeDirect;
  /** The `wrangler dev` process (its launcher; workerd is its child). */
  edgePid: number;
  workers: WorkerHandle[];
  stop(): Promise<void>;
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
