/**
 * The worker's queue for sequences, read at scrape time: how long the oldest waiter has waited, how
 * many sequences are free, waiters that left because their call was cancelled, and turns refused
 * because the queue was full. A stall shows as a growing oldest wait while sequences are free.
 */
import { Counter, Gauge, type Registry } from "prom-client";

/** The queue's figures a scrape reads (the session table's `stats().queue` and the engine's free sequences). */
export interface QueueGauges {
  sequencesFree: number;
  oldestWaitMs: number;
  /** Waiters that left the queue because their call was cancelled (client gone, wall clock), since start. */
  aborted: number;
  /** Turns refused (OVERLOADED) because they would have waited past a bound, by bound, since start. */
  refused: Readonly<Record<string, number>>;
}

export function defineQueueMetrics(registers: Registry[], read: () => QueueGauges | undefined): void {
  new Gauge({
    name: "frontier:sequences_free",
    help: "Engine sequences neither running a turn nor holding an idle session.",
    registers,
    collect() {
      this.set(read()?.sequencesFree ?? 0);
    },
  });
  new Gauge({
    name: "frontier:request_queue_oldest_wait_seconds",
    help: "How long the oldest turn waiting for a sequence has waited (0 when none waits).",
    registers,
    collect() {
      this.set((read()?.oldestWaitMs ?? 0) / 1000);
    },
  });
  new Counter({
    name: "frontier:request_queue_aborted_total",
    help: "Turns that left the queue for a sequence because their call was cancelled (client gone or wall clock).",
    registers,
    collect() {
      this.reset();
      this.inc(read()?.aborted ?? 0);
    },
  });
  new Counter({
    name: "frontier:request_queue_refused_total",
    help: "Turns refused with OVERLOADED because the queue (bound=total) or the tenant's share (bound=tenant) was full.",
    labelNames: ["bound"],
    registers,
    collect() {
      this.reset();
      for (const [bound, count] of Object.entries(read()?.refused ?? {})) this.inc({ bound }, count);
    },
  });
}
