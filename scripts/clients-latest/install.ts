/**
 * Installing the newest published release of each client into a folder of its own (never the
 * repo's node_modules or lockfile), and reading back which versions landed.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** `npm install --prefix dir pkg@latest …` into a fresh private package; throws when npm fails. */
export function installLatest(dir: string, packages: readonly string[]): void {
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "frontier-clients-latest", private: true })}\n`);
  const args = ["install", "--prefix", dir, "--no-audit", "--no-fund", "--save-exact"];
  const run = spawnSync("npm", [...args, ...packages.map((p) => `${p}@latest`)], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (run.status !== 0) throw new Error(`npm install failed (${run.status}):\n${run.stderr.slice(-3000)}`);
}

/** The version of each package installed under `dir/node_modules` (absent ones left out). */
export function installedVersions(dir: string, packages: readonly string[]): Map<string, string> {
  const versions = new Map<string, string>();
  for (const pkg of packages) {
    const manifest = join(dir, "node_modules", pkg, "package.json");
    if (!existsSync(manifest)) continue;
    const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown };
    if (typeof version === "string") versions.set(pkg, version);
  }
  return versions;
}
