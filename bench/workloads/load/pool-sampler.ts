/**
 * What the pool looked like during the run: `GET /admin/workers` every ~250 ms (the workers' own
 * heartbeat reports, every 500 ms in the local stack: sequences free, queue depth, requests in the
 * worker, resident sessions), and the workers' resident memory from /proc.
 */
import { readFileSync } from "node:fs";

const ADMIN_TOKEN = process.env.FRONTIER_ADMIN_TOKEN || "frontier-dev-admin-token-change-me";

export interface WorkerSample {
  id: string;
  state: string;
  sequencesTotal: number;
  sequencesFree: number;
  queueDepth: number;
  activeRequests: number;
  residentSessions: number;
}

export interface PoolSample {
  /** ms since the run started. */
  atMs: number;
  workers: WorkerSample[];
}

interface AdminView {
  regions: { workers: (WorkerSample & { static?: boolean })[] }[];
}

/**
 * The pooled workers (ids from their heartbeats; the static URL rows the edge also lists are left
 * out), or a rejection after `timeoutMs`. A plain timer and controller: Node holds the signal of
 * `AbortSignal.timeout()` (and `AbortSignal.any()`) weakly, and fetch can lose such a signal to garbage
 * collection and then never end (nodejs/undici#4068).
 */
export async function readPool(edgeUrl: string, timeoutMs = 5000): Promise<WorkerSample[]> {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`GET /admin/workers: no answer in ${timeoutMs} ms`)),
    timeoutMs,
  );
  let view: AdminView;
  try {
    const res = await fetch(`${edgeUrl}/admin/workers`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      signal: controller.signal,
    });
    if (res.status !== 200) throw new Error(`GET /admin/workers answered ${res.status}`);
    view = (await res.json()) as AdminView;
  } finally {
    clearTimeout(timer);
  }
  return view.regions
    .flatMap((r) => r.workers)
    .filter((w) => w.id.startsWith("worker-"))
    .map(({ id, state, sequencesTotal, sequencesFree, queueDepth, activeRequests, residentSessions }) => ({
      id,
      state,
      sequencesTotal,
      sequencesFree,
      queueDepth,
      activeRequests,
      residentSessions,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Samples on a fixed interval. A read that has not answered within 2 s is given up on (raced against a
 * timer, whatever fetch does with its abort) and counted; at most 4 reads are in flight, so a slow edge
 * thins the samples instead of stopping them.
 */
export class PoolSampler {
  readonly samples: PoolSample[] = [];
  /** Reads that failed (timeouts, non-200), by message; ticks skipped with 4 reads in flight. */
  readonly failures = new Map<string, number>();
  #interval: ReturnType<typeof setInterval> | undefined;
  #inFlight = 0;

  constructor(
    private readonly edgeUrl: string,
    private readonly clock: () => number,
    private readonly everyMs = 250,
  ) {}

  start(): void {
    const count = (key: string) => this.failures.set(key, (this.failures.get(key) ?? 0) + 1);
    const tick = async () => {
      if (this.#inFlight >= 4) return count("skipped: 4 reads in flight");
      this.#inFlight++;
      const at = this.clock();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("GET /admin/workers: no answer in 2 s")), 2000);
      });
      try {
        const workers = await Promise.race([readPool(this.edgeUrl, 2000), late]);
        this.samples.push({ atMs: at, workers });
      } catch (error) {
        count(error instanceof Error ? error.message : String(error));
      } finally {
        clearTimeout(timer);
        this.#inFlight--;
      }
    };
    this.#interval = setInterval(() => void tick(), this.everyMs);
    void tick();
  }

  stop(): void {
    clearInterval(this.#interval);
  }

  /** The samples in time order (reads answer out of order). */
  ordered(): PoolSample[] {
    return [...this.samples].sort((a, b) => a.atMs - b.atMs);
  }
}

/** A process's resident set size in bytes (VmRSS), or NaN when it is gone. */
export function rssBytes(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    const kib = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kib === undefined ? Number.NaN : Number(kib) * 1024;
  } catch {
    return Number.NaN;
  }
}
