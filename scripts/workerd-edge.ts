/**
 * The edge in workerd without `wrangler dev`: the same bundle (`wrangler deploy --dry-run`), the same
 * bindings, Durable Objects and compatibility settings (read from wrangler.toml by wrangler's own
 * `unstable_getMiniflareWorkerOptions`), run by Miniflare on the edge's own socket: no dev proxy or
 * entry worker in front, no inspector, no per-request log. That is what a deployed edge's runtime
 * does per request, as near as loopback gets; `wrangler dev` adds its proxy worker, its inspector
 * relay and a request log through Node. Benchmarks only: `npm start` and the tests keep `wrangler dev`.
 */
import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface WorkerdEdge {
  url: string;
  stop(): Promise<void>;
}

export async function startWorkerdEdge(options: {
  port: number;
  /** Holds the bundle and the Durable Objects' SQLite files (not shared with any other edge). */
  stateDir: string;
  /** Bound as the edge's variables and secrets on top of wrangler.toml's `[vars]`. */
  vars: Record<string, string>;
  /** Serve V8's inspector on this port (a CPU profile: bench/edge/edge-profile.ts). */
  inspectorPort?: number;
}): Promise<WorkerdEdge> {
  const bundleDir = join(options.stateDir, "bundle");
  mkdirSync(bundleDir, { recursive: true });
  await bundle(bundleDir);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(join(REPO_ROOT, "wrangler.toml"));
  const { port } = options;
  const miniflare = new Miniflare({
    ...workerOptions,
    modules: true,
    modulesRoot: bundleDir,
    scriptPath: join(bundleDir, "index.js"),
    bindings: { ...workerOptions.bindings, ...options.vars },
    durableObjectsPersist: join(options.stateDir, "durable-objects"),
    // The edge's own socket: requests reach it without Miniflare's entry worker (a second isolate
    // hop that adds request.cf and dev-only headers). Miniflare's entry listener stays on a free port.
    unsafeDirectSockets: [{ host: "127.0.0.1", port }],
    host: "127.0.0.1",
    port: 0,
    logRequests: false,
    ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
    // The edge's JSON log lines (one per turn) are dropped, as a deployment's log sink would take
    // them; errors still reach this process's stderr.
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.resume();
      stderr.pipe(process.stderr);
    },
  });
  await miniflare.ready;
  return { url: `http://127.0.0.1:${port}`, stop: () => miniflare.dispose() };
}

/**
 * `wrangler deploy --dry-run --outdir`: wrangler's own bundle of the Worker `config` names (by
 * default wrangler.toml's, edge/index.ts) into `outDir/<entry name>.js`, nothing uploaded.
 */
export function bundle(outDir: string, config = join(REPO_ROOT, "wrangler.toml")): Promise<void> {
  const wrangler = join(REPO_ROOT, "node_modules/wrangler/bin/wrangler.js");
  const args = [wrangler, "deploy", "--dry-run", "--outdir", outDir, "--config", config];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk) => (output += String(chunk)));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`wrangler deploy --dry-run exited with ${code}:\n${output}`)),
    );
  });
}
