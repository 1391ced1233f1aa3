/**
 * The browser tests' Chromium: Debian's package, never a downloaded build (the tests run offline).
 * `ensureChromium()` finds it — `$FRONTIER_CHROMIUM`, else /usr/bin/chromium or
 * /usr/bin/chromium-browser — or installs the `chromium` package with apt-get when this process may
 * (root, or passwordless sudo), and otherwise fails with the command to run.
 *   npx tsx scripts/ensure-chromium.ts      prints the path (installing first when it can)
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
const INSTALL = "apt-get install -y --no-install-recommends chromium";

export class ChromiumMissing extends Error {
  override name = "ChromiumMissing";
}

function found(): string | undefined {
  const configured = process.env.FRONTIER_CHROMIUM;
  if (configured) {
    if (!existsSync(configured)) throw new ChromiumMissing(`FRONTIER_CHROMIUM=${configured}: no such file`);
    return configured;
  }
  return CANDIDATES.find((path) => existsSync(path));
}

/** How this process may run apt-get: as root, through passwordless sudo, or not at all. */
function aptRunner(): string[] | undefined {
  if (!existsSync("/usr/bin/apt-get")) return undefined;
  if (process.getuid?.() === 0) return [];
  const sudo = spawnSync("sudo", ["-n", "true"], { stdio: "ignore" });
  return sudo.status === 0 ? ["sudo", "-n"] : undefined;
}

/** The path of a Chromium to launch headless; installs Debian's package first when it is missing and it may. */
export function ensureChromium(): string {
  const have = found();
  if (have) return have;
  const runner = aptRunner();
  if (!runner) {
    throw new ChromiumMissing(
      `Chromium is not installed and this user cannot install it (no apt-get, or not root and no passwordless sudo). ` +
        `Install Debian's package — sudo ${INSTALL} — or set FRONTIER_CHROMIUM to a Chromium binary.`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["apt-get", "update"], INSTALL.split(" ")]) {
    const [cmd, ...rest] = [...runner, ...args] as [string, ...string[]];
    process.stderr.write(`ensure-chromium: ${[cmd, ...rest].join(" ")}\n`);
    const run = spawnSync(cmd, rest, { stdio: ["ignore", "inherit", "inherit"], env });
    if (run.status !== 0) {
      throw new ChromiumMissing(`${[cmd, ...rest].join(" ")} failed (exit ${run.status}): install chromium yourself`);
    }
  }
  const installed = found();
  if (!installed) throw new ChromiumMissing(`apt-get installed chromium but none of ${CANDIDATES.join(", ")} exists`);
  return installed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${ensureChromium()}\n`);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
