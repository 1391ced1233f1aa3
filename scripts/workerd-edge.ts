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
import { fileURLToPath } from "node:url";
import { convertV4MiniflareOptions, type Json, Miniflare, type V4WorkerdStructuredLog } from "miniflare";
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
  // wrangler.toml's `[vars]` (typed `unknown`: wrangler's options type omits keys from an index signature).
  const tomlVars = workerOptions.bindings;
  if (tomlVars !== undefined && !isVarsObject(tomlVars))
    throw new Error("wrangler gave the edge's [vars] as a non-object");
  // Miniflare 5 takes per-worker configs; wrangler still describes the edge in Miniflare 4's
  // options, which Miniflare's own converter turns into them.
  const miniflare = new Miniflare(
    convertV4MiniflareOptions({
      ...workerOptions,
      modules: true,
      // The bundle is one ES module; Miniflare 5 refuses 4.x module rules (wrangler still sends them).
      modulesRules: undefined,
      modulesRoot: bundleDir,
      scriptPath: join(bundleDir, "index.js"),
      bindings: { ...tomlVars, ...options.vars },
      resourcePersistencePath: join(options.stateDir, "durable-objects"),
      // The edge's own socket: requests reach it without Miniflare's entry worker (a second isolate
      // hop that adds request.cf and dev-only headers). Miniflare's entry listener stays on a free port.
      unsafeDirectSockets: [{ host: "127.0.0.1", port }],
      host: "127.0.0.1",
      port: 0,
      logRequests: false,
      ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
      handleStructuredLogs: warningsAndErrorsToStderr,
    }),
  );
  await miniflare.ready;
  return { url: `http://127.0.0.1:${port}`, stop: () => miniflare.dispose() };
}

/** `[vars]` as wrangler parsed them from TOML: an object whose values are JSON by construction. */
function isVarsObject(value: unknown): value is Record<string, Json> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * For Miniflare's `handleStructuredLogs`: workerd's warnings and errors go to this process's stderr;
 * the rest (the edge's JSON log lines, one per turn) is dropped, as a deployment's log sink would
 * take it.
 */
export function warningsAndErrorsToStderr(log: V4WorkerdStructuredLog): void {
  if (log.level === "error" || log.level === "warn") process.stderr.write(`${log.message}\n`);
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
