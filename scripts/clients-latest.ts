/**
 * `npm run clients:latest`: the weekly client drift check. Installs the newest published release of
 * every client and SDK in the e2e matrix into a temporary folder (the repo's lockfile and
 * node_modules stay as they are), runs the matrix's e2e files against a local stack with those
 * versions (FRONTIER_CLIENTS_DIR), and prints one row per client: version, pass/fail, and the
 * prefilled/prompt tokens of its continued turns (FRONTIER_CLIENTS_REPORT). Needs the npm registry,
 * so it is not part of `npm test` or CI. Exit 0 when every client passed.
 *   --keep   keep the temporary folder (its path is printed) for a look at what was installed
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { installedVersions, installLatest } from "./clients-latest/install.ts";
import { MATRIX, matrixFiles, matrixPackages } from "./clients-latest/matrix.ts";
import { clientRows, formatTable, parseContinuedTurns, parseVitestJson } from "./clients-latest/report.ts";
import { REPO_ROOT } from "./stack.ts";

const { values } = parseArgs({ options: { keep: { type: "boolean", default: false } } });
const dir = mkdtempSync(join(tmpdir(), "frontier-clients-latest-"));
const reportFile = join(dir, "continued-turns.jsonl");
const vitestJson = join(dir, "vitest.json");
writeFileSync(reportFile, "");

try {
  const packages = matrixPackages();
  process.stdout.write(`installing ${packages.map((p) => `${p}@latest`).join(" ")} into ${dir}\n`);
  installLatest(dir, packages);
  const versions = installedVersions(dir, packages);
  for (const pkg of packages) process.stdout.write(`  ${pkg} ${versions.get(pkg) ?? "not installed"}\n`);

  const files = matrixFiles().map((f) => `test/e2e/${f}`);
  const args = ["vitest", "run", "--config", "vitest.e2e.config.ts", ...files];
  args.push("--reporter=default", "--reporter=json", `--outputFile.json=${vitestJson}`);
  const env = { ...process.env, FRONTIER_CLIENTS_DIR: dir, FRONTIER_CLIENTS_REPORT: reportFile };
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn("npx", args, { cwd: REPO_ROOT, env, stdio: "inherit" });
    child.once("exit", resolve);
    child.once("error", () => resolve(null));
  });

  const outcomes = existsSync(vitestJson) ? parseVitestJson(readFileSync(vitestJson, "utf8")) : new Map();
  const rows = clientRows(MATRIX, versions, outcomes, parseContinuedTurns(readFileSync(reportFile, "utf8")));
  process.stdout.write(`\nclients:latest (${new Date().toISOString().slice(0, 10)}, vitest exit ${code})\n`);
  process.stdout.write(`${formatTable(rows)}\n`);
  process.exitCode = rows.every((r) => r.result === "pass") ? 0 : 1;
} finally {
  if (values.keep) process.stdout.write(`kept ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
