/**
 * Pool membership: the worker registers with, and heartbeats to, its region's PoolDO through the
 * edge's authenticated internal endpoint (`POST /internal/pool/heartbeat`, bearer pool token), the
 * report being the proto's `WorkerReport` in proto JSON.
 * A failing edge is retried every interval; the state changes are logged once, never the token.
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
        signal: AbortSignal.timeout(Math.max(1000, options.intervalMs)),
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
