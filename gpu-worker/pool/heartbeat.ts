/**
 * Pool membership: the worker registers with, and heartbeats to, its region's PoolDO through the
 * edge's authenticated internal endpoint (`POST /internal/pool/heartbeat`, bearer pool token), the
 * report being the proto's `WorkerReport` in proto JSON.
 * A failing edge is retried every interval; the state changes are logged once, never the token.
 * A heartbeat waits up to `HEARTBEAT_ANSWER_MS` for the edge's answer, not one interval: the pool
 * takes a worker for down only after `HEARTBEAT_TIMEOUT_MS` (6 s) without one, so a heartbeat a
 * crowded edge answers in 1–5 s still keeps the worker up. Giving up after the interval lost every
 * heartbeat while the edge lagged, and the pool refused every new session although both workers
 * were serving (the 256-agent load run, docs/bench/history/issue-42-load.md).
 */
import { randomBytes } from "node:crypto";
import { toJson } from "@bufbuild/protobuf";
import { type WorkerReport, WorkerReportSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { log } from "../log.ts";

export interface HeartbeatOptions {
  edgeUrl: string;
  token: string;
  intervalMs: number;
}

export interface Heartbeat {
  /** Send one report now (after a state change such as a drain). */
  beat(extra?: Partial<WorkerReport>): Promise<boolean>;
  /** Stop the loop; with `leaving`, tell the pool this worker is gone. */
  stop(leaving: boolean): Promise<void>;
}

/** How long one heartbeat waits for the edge's answer (below the pool's 6 s staleness bound). */
const HEARTBEAT_ANSWER_MS = 5000;

/** A random id for this process: a restarted worker is a new member (a drain does not outlive it). */
export const BOOT_ID = randomBytes(8).toString("hex");

export function startHeartbeat(options: HeartbeatOptions, report: () => WorkerReport): Heartbeat {
  const endpoint = new URL("/internal/pool/heartbeat", options.edgeUrl).href;
  let healthy: boolean | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  const beat = async (extra: Partial<WorkerReport> = {}): Promise<boolean> => {
    let ok = false;
    let detail = "";
    try {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${options.token}` },
        body: JSON.stringify(toJson(WorkerReportSchema, { ...report(), ...extra })),
        signal: AbortSignal.timeout(Math.max(HEARTBEAT_ANSWER_MS, options.intervalMs)),
      });
      ok = response.ok;
      detail = ok ? "" : `HTTP ${response.status}`;
      await response.body?.cancel();
    } catch (error) {
      detail = error instanceof Error ? error.message : String(error);
    }
    if (ok !== healthy) {
      if (ok) log("pool heartbeat ok", { edge: options.edgeUrl });
      else log("pool heartbeat failing", { edge: options.edgeUrl, error: detail });
      healthy = ok;
    }
    return ok;
  };

  const loop = async (): Promise<void> => {
    if (stopped) return;
    await beat();
    if (!stopped) timer = setTimeout(() => void loop(), options.intervalMs);
    timer?.unref();
  };
  void loop();

  return {
    beat,
    async stop(leaving) {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      if (leaving) await beat({ leaving: true });
    },
  };
}
