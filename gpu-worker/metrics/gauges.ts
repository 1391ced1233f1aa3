/** The scrape-time gauges of a worker, read from the engine, the session table and the store. */
import type { Engine } from "../../native/engine-types.ts";
import type { SessionCheckpoints } from "../checkpoints/session-checkpoints.ts";
import type { SessionTable } from "../session/session-table.ts";
import type { WorkerGauges } from "./worker-metrics.ts";

export function workerGauges(deps: {
  engine: Engine;
  sessions: SessionTable;
  checkpoints: SessionCheckpoints | undefined;
}): WorkerGauges {
  const engine = deps.engine.stats();
  const sessions = deps.sessions.stats();
  return {
    running: sessions.active,
    waiting: sessions.queued,
    queue: {
      sequencesFree: engine.sequencesFree,
      oldestWaitMs: sessions.queue.oldestWaitMs,
      aborted: sessions.queue.aborted,
      refused: sessions.queue.refused,
    },
    residentSessions: sessions.resident,
    parkedSessions: sessions.parked,
    kvTokens: engine.tokensHeld,
    kvCapacity: engine.sequencesTotal * deps.engine.options.contextSize,
    checkpoints: deps.checkpoints?.store.stats(),
    checkpointsSkippedWithoutKey: deps.checkpoints?.skippedWithoutKey(),
  };
}
