/**
 * Worker processes of a bench run still alive after its stack stopped. The launcher stops a worker
 * with SIGTERM, then SIGKILL after 5 s; a worker still saving big sessions on SIGTERM can outlive
 * that as an orphan. Found by the run's own worker state directory in the process environment
 * (Linux /proc: only this run's workers carry it), given 30 s to finish, then killed.
 */
import { readdirSync, readFileSync } from "node:fs";

export async function reapWorkers(workerStateDir: string): Promise<void> {
  const marker = `FRONTIER_STATE_DIR=${workerStateDir}`;
  const mine = (): number[] => {
    let pids: string[] = [];
    try {
      pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
    } catch {
      return [];
    }
    return pids.flatMap((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(marker) ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
  };
  for (let i = 0; i < 60 && mine().length > 0; i++) await new Promise((r) => setTimeout(r, 500));
  for (const pid of mine()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
