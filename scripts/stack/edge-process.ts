/** The edge under `wrangler dev` as a child process of the local stack, with the development settings. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { stripVTControlCharacters } from "node:util";
import { DEV_DIGESTS, DEV_ID_SECRET, DEV_MODE_FLAG, DEV_WORKER_TOKEN } from "../../shared/dev-secrets.ts";
import { freePort, REPO_ROOT } from "./processes.ts";

/** An edge in workerd reached without `wrangler dev`'s proxy, and the headers it requires. */
export interface EdgeDirect {
  url: string;
  headers: Record<string, string>;
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
    if (child.exitCode !== null)
      throw new Error(`wrangler dev exited with ${child.exitCode}${causeOf(tail)}:\n${tail.join("\n")}`);
    try {
      // Bounded: a listener that accepts and never answers must not hold the start past its deadline.
      const res = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(5_000) });
      if (res.status === 200) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill("SIGTERM");
  throw new Error(`wrangler dev did not answer on ${url} within 90 s:\n${tail.join("\n")}`);
}

/** wrangler's own error line (its binding table fills the tail before it), to lead the thrown message. */
function causeOf(tail: readonly string[]): string {
  const line = tail.map((l) => stripVTControlCharacters(l).trim()).find((l) => /\bERROR\b/.test(l));
  return line ? ` (${line})` : "";
}
