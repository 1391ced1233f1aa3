/**
 * The edge → worker Generate stream's deadlines (enforced by edge/worker/grpc-web-stream.ts; what
 * each means: edge/worker/stream-deadlines.ts; why these defaults: docs/operations/faults.md).
 */
import { positiveInt } from "../core/config-values.ts";

export interface StreamDeadlines {
  /** The worker's response headers within this long of the fetch (else it never took the request). */
  connectMs: number;
  /** The first bytes of its body within this long of the headers. */
  firstEventMs: number;
  /** At most this long between reads (the worker keeps alive every FRONTIER_KEEPALIVE_MS, 1 s). */
  idleMs: number;
}

export interface DeadlineVars {
  WORKER_CONNECT_TIMEOUT_MS?: string;
  WORKER_FIRST_EVENT_TIMEOUT_MS?: string;
  WORKER_IDLE_TIMEOUT_MS?: string;
}

/** Seconds, not minutes: a frozen worker's clients see the protocol's error within `idleMs`. */
export const DEFAULT_STREAM_DEADLINES: StreamDeadlines = { connectMs: 5_000, firstEventMs: 10_000, idleMs: 15_000 };

export function parseDeadlines(vars: DeadlineVars): StreamDeadlines {
  const d = DEFAULT_STREAM_DEADLINES;
  return {
    connectMs: positiveInt(vars.WORKER_CONNECT_TIMEOUT_MS, "WORKER_CONNECT_TIMEOUT_MS", d.connectMs),
    firstEventMs: positiveInt(vars.WORKER_FIRST_EVENT_TIMEOUT_MS, "WORKER_FIRST_EVENT_TIMEOUT_MS", d.firstEventMs),
    idleMs: positiveInt(vars.WORKER_IDLE_TIMEOUT_MS, "WORKER_IDLE_TIMEOUT_MS", d.idleMs),
  };
}
