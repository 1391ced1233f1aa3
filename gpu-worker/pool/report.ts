/** The heartbeat report: this worker's identity, capacity and the prefixes it holds. */
import { create } from "@bufbuild/protobuf";
import type { Engine } from "../../native/engine-types.ts";
import { type WorkerReport, WorkerReportSchema } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { WorkerConfig } from "../config.ts";
import type { SessionTable } from "../session/session-table.ts";
import type { DrainState } from "./drain.ts";
import { BOOT_ID } from "./heartbeat.ts";
import type { PrefixSet } from "./prefix-set.ts";

/** Prefix fingerprints per report (the edge keeps at most this many per worker). */
const MAX_REPORTED_PREFIXES = 64;

/** What a report reads (the service's dependencies hold all of it). */
export interface ReportSources {
  engine: Pick<Engine, "stats" | "model">;
  sessions: Pick<SessionTable, "stats">;
  config: Pick<WorkerConfig, "workerId" | "region" | "maxQueue">;
  prefixes: PrefixSet;
  drain: DrainState;
}

export function heartbeatReport(deps: ReportSources, url: string): WorkerReport {
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
    queueCapacity: deps.config.maxQueue,
    activeRequests: sessions.active,
    residentSessions: sessions.resident,
    prefixes: deps.prefixes.list(MAX_REPORTED_PREFIXES),
    draining: deps.drain.draining,
    leaving: false,
  });
}
