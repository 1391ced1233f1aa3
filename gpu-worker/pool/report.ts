/** The heartbeat report: this worker's identity, capacity and the prefixes it holds. */
import { create } from "@bufbuild/protobuf";
import { type WorkerReport, WorkerReportSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerDeps } from "../service.ts";
import { BOOT_ID } from "./heartbeat.ts";

/** Prefix fingerprints per report (the edge keeps at most this many per worker). */
const MAX_REPORTED_PREFIXES = 64;

export function heartbeatReport(deps: WorkerDeps, url: string): WorkerReport {
  const engine = deps.engine.stats();
  const sessions = deps.sessions.stats();
  return create(WorkerReportSchema, {
    id: deps.config.workerId,
    region: deps.config.region,
    url,
    boot: BOOT_ID,
    modelIdentity: deps.engine.model.identity,
    sequencesTotal: engine.sequencesTotal,
    sequencesFree: engine.sequencesFree,
    queueDepth: sessions.queued,
    activeRequests: sessions.active,
    residentSessions: sessions.resident,
    prefixes: deps.prefixes.list(MAX_REPORTED_PREFIXES),
    draining: deps.drain.draining,
    leaving: false,
  });
}
