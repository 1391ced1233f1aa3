/** Process helpers the local stack shares: the repository root, a free loopback port, stopping a child. */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The lowest port handed out below the kernel's ephemeral range (under it: well-known services). */
const LOWEST_CHOSEN_PORT = 10_000;

/**
 * Ports this process may choose for a child to listen on: those below the kernel's ephemeral range,
 * which the kernel never gives to a `listen(0)` or an outgoing connection. A port taken from the
 * ephemeral range and closed again can be taken by anyone's next bind or connect before the child
 * binds it (seconds later, after the workers start): then `wrangler dev` exits with "Address already
 * in use". Undefined where the range cannot be read or leaves no room below it.
 */
function chosenPortRange(): { low: number; high: number } | undefined {
  try {
    const [ephemeralLow] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
    const high = Number(ephemeralLow) - 1;
    return high - LOWEST_CHOSEN_PORT >= 1_000 ? { low: LOWEST_CHOSEN_PORT, high } : undefined;
  } catch {
    return undefined;
  }
}

const range = chosenPortRange();
/** Ports this process has handed out or tried: never twice, even once their listener is gone. */
const handedOut = new Set<number>();

/** Listen on `port` (0: any the kernel gives) on loopback, close again; the port, or undefined if taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once("error", () => resolvePort(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === "object" && address ? address.port : undefined));
    });
  });
}

/**
 * A loopback port no one listens on, for a child process to listen on: chosen at random below the
 * ephemeral range (see chosenPortRange), else one the kernel gives.
 */
export async function freePort(): Promise<number> {
  if (range) {
    for (let attempt = 0; attempt < 64; attempt++) {
      const port = range.low + Math.floor(Math.random() * (range.high - range.low + 1));
      if (handedOut.has(port)) continue;
      // Claimed before the probe awaits: two concurrent calls cannot both take it.
      handedOut.add(port);
      if ((await probe(port)) === port) return port;
    }
  }
  const port = await probe(0);
  if (port === undefined) throw new Error("no free loopback port");
  return port;
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
