/** The heartbeat report: this worker's identity, capacity and the prefixes it holds. */
import type { WorkerDeps } from "../service.ts";
import { BOOT_ID, type HeartbeatReport } from "./heartbeat.ts";

/** Prefix fingerprints per report (the edge keeps at most this many per worker). */
const MAX_REPORTED_PREFIXES = 64;

export function heartbeatReport(deps: WorkerDeps, url: string): HeartbeatReport {
  const engine = deps.engine.stats();
  const sessions = deps.sessions.stats();
  return {
    id: deps.config.workerId,
    region: deps.config.region,
    url,
    boot: BOOT_ID,
    model_identity: deps.engine.model.identity,
    sequences_total: engine.sequencesTotal,
    sequences_free: engine.sequencesFree,
    queue_depth: sessions.queued,
    active_requests: sessions.active,
    resident_sessions: sessions.resident,
    prefixes: deps.prefixes.list(MAX_REPORTED_PREFIXES),
    draining: deps.drain.draining,
    leaving: false,
  };
}
