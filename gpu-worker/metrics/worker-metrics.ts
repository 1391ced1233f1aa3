/**
 * The worker's Prometheus metrics (prom-client, one registry per worker, no process-global state).
 * Names and labels follow vLLM's (`vllm:` → `frontier:`, `model_name` and `engine` labels on every
 * series) where vLLM has the metric; Frontier's own metrics use the same labels. Recording is a few
 * counter increments per turn and one histogram observation per sampled token; gauges are read from
 * their sources at scrape time. Each metric is documented in the README ("Metrics").
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { CheckpointReason, CheckpointStats } from "../checkpoints/store/types.ts";
import {
  INTER_TOKEN_BUCKETS,
  IO_BUCKETS,
  oneTwoFiveBuckets,
  REQUEST_LATENCY_BUCKETS,
  TTFT_BUCKETS,
} from "./buckets.ts";
import { defineQueueMetrics, type QueueGauges } from "./queue-metrics.ts";
import type { TurnPhases } from "./turn-trace.ts";

/** What the worker holds right now, read at scrape time. */
export interface WorkerGauges {
  /** Requests holding a session (prefill or decode). */
  running: number;
  /** Requests waiting for a free sequence. */
  waiting: number;
  /** The queue for sequences (undefined: not reported). */
  queue?: QueueGauges | undefined;
  residentSessions: number;
  parkedSessions: number;
  /** Tokens held in the KV across all sequences, and the cells the context has. */
  kvTokens: number;
  kvCapacity: number;
  /** The checkpoint store, when checkpoints are on. */
  checkpoints: CheckpointStats | undefined;
  /** Session checkpoints skipped because the session held no tenant data key, by reason. */
  checkpointsSkippedWithoutKey?: Readonly<Record<string, number>> | undefined;
}

/** vLLM's `finished_reason` values. */
export type FinishedReason = "stop" | "length" | "abort";

/** One finished turn, as the turn runner reports it. */
export interface FinishedTurn {
  /** The continuation ladder's decision (`live-tool-ids`, `checkpoint`, `cold`, …). */
  decision: string;
  /** Why the live KV was not continued ("" when it was). */
  missReason: string;
  promptTokens: number;
  /** Tokens reused from the live KV or a checkpoint. */
  cachedTokens: number;
  /** Tokens appended to the KV (prompt − cached). */
  prefilledTokens: number;
  outputTokens: number;
  finishedReason: FinishedReason;
  phases: TurnPhases;
}

export type ReplicaOperation = "upload" | "download" | "delete" | "list";
export type ReadOutcome = "ok" | "corrupt" | "mismatch" | "error";

export class WorkerMetrics {
  readonly registry = new Registry();
  readonly #c;
  readonly #h;
  readonly #gauges: () => WorkerGauges;
  /** Read once per scrape, shared by every gauge. */
  #current: WorkerGauges | undefined;

  constructor(options: { modelName: string; contextSize: number }, gauges: () => WorkerGauges) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ model_name: options.modelName, engine: "0" });
    const counter = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(
      name: string,
      help: string,
      buckets: number[],
      labelNames: readonly L[] = [],
    ) => new Histogram<L>({ name, help, buckets, labelNames, registers });
    const tokenBuckets = oneTwoFiveBuckets(options.contextSize);
    this.#c = {
      prefixQueries: counter("frontier:prefix_cache_queries_total", "Prefix cache queries, in prompt tokens queried."),
      prefixHits: counter(
        "frontier:prefix_cache_hits_total",
        "Prefix cache hits, in tokens reused (live KV or checkpoint).",
      ),
      promptTokens: counter("frontier:prompt_tokens_total", "Prompt tokens of finished requests (reused + prefilled)."),
      generationTokens: counter("frontier:generation_tokens_total", "Tokens sampled."),
      success: counter("frontier:request_success_total", "Finished requests.", ["finished_reason"]),
      preemptions: counter(
        "frontier:num_preemptions_total",
        "Sessions parked to a checkpoint to free a sequence (or handed over on drain).",
      ),
      decisions: counter("frontier:continuation_decisions_total", "Continuation ladder decisions.", [
        "decision",
        "miss_reason",
      ]),
      prefilled: counter("frontier:tokens_prefilled_total", "Prompt tokens appended to the KV, by decision.", [
        "decision",
      ]),
      reused: counter(
        "frontier:tokens_reused_total",
        "Prompt tokens reused from the KV or a checkpoint, by decision.",
        ["decision"],
      ),
      writes: counter("frontier:checkpoint_writes_total", "Checkpoint writes committed.", ["reason"]),
      writeBytes: counter("frontier:checkpoint_write_bytes_total", "Bytes of committed checkpoints.", ["reason"]),
      writeFailures: counter("frontier:checkpoint_write_failures_total", "Checkpoint writes that failed.", ["reason"]),
      reads: counter("frontier:checkpoint_reads_total", "Checkpoint loads, by outcome.", ["reason", "outcome"]),
      readBytes: counter("frontier:checkpoint_read_bytes_total", "Bytes of checkpoints loaded.", ["reason"]),
      restores: counter("frontier:session_restores_total", "Sessions restored from a checkpoint when leased.", [
        "outcome",
      ]),
      lookups: counter("frontier:checkpoint_prefix_lookups_total", "Longest-prefix lookups in the checkpoint index.", [
        "result",
      ]),
      replicaOps: counter("frontier:replica_operations_total", "Requests to the S3 checkpoint replica.", ["operation"]),
      replicaFailures: counter("frontier:replica_failures_total", "Failed requests to the S3 checkpoint replica.", [
        "operation",
      ]),
    };
    this.#h = {
      ttft: histogram("frontier:time_to_first_token_seconds", "Time to first token in seconds.", TTFT_BUCKETS),
      itl: histogram("frontier:inter_token_latency_seconds", "Inter-token latency in seconds.", INTER_TOKEN_BUCKETS),
      e2e: histogram(
        "frontier:e2e_request_latency_seconds",
        "End-to-end request latency in seconds.",
        REQUEST_LATENCY_BUCKETS,
      ),
      queue: histogram(
        "frontier:request_queue_time_seconds",
        "Time waiting for the session and a sequence.",
        REQUEST_LATENCY_BUCKETS,
      ),
      prefill: histogram(
        "frontier:request_prefill_time_seconds",
        "Time prefilling the prompt suffix.",
        REQUEST_LATENCY_BUCKETS,
      ),
      decode: histogram("frontier:request_decode_time_seconds", "Time decoding.", REQUEST_LATENCY_BUCKETS),
      promptTokens: histogram("frontier:request_prompt_tokens", "Prompt tokens per request.", tokenBuckets),
      generationTokens: histogram("frontier:request_generation_tokens", "Generated tokens per request.", tokenBuckets),
      restore: histogram(
        "frontier:request_restore_time_seconds",
        "Checkpoint loads on a request's path.",
        REQUEST_LATENCY_BUCKETS,
      ),
      write: histogram("frontier:checkpoint_write_seconds", "Checkpoint write duration.", IO_BUCKETS, ["reason"]),
      read: histogram("frontier:checkpoint_read_seconds", "Checkpoint load duration.", IO_BUCKETS, ["reason"]),
      replica: histogram("frontier:replica_operation_seconds", "S3 replica request duration.", IO_BUCKETS, [
        "operation",
      ]),
    };
    this.#gauges = gauges;
    this.#defineGauges(() => {
      this.#current ??= this.#gauges();
      return this.#current;
    });
  }

  /** The exposition (Prometheus text format) and its content type. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    this.#current = undefined;
    try {
      return { contentType: this.registry.contentType, body: await this.registry.metrics() };
    } finally {
      this.#current = undefined;
    }
  }

  /** Observe the gap between two sampled tokens. */
  readonly interToken = (seconds: number): void => this.#h.itl.observe(seconds);

  turnFinished(turn: FinishedTurn): void {
    const c = this.#c;
    const h = this.#h;
    c.prefixQueries.inc(turn.promptTokens);
    c.prefixHits.inc(turn.cachedTokens);
    c.promptTokens.inc(turn.promptTokens);
    c.generationTokens.inc(turn.outputTokens);
    c.success.inc({ finished_reason: turn.finishedReason });
    c.decisions.inc({ decision: turn.decision, miss_reason: turn.missReason || "none" });
    c.prefilled.inc({ decision: turn.decision }, turn.prefilledTokens);
    c.reused.inc({ decision: turn.decision }, turn.cachedTokens);
    const p = turn.phases;
    if (p.firstTokenMs > 0) h.ttft.observe(p.firstTokenMs / 1000);
    h.e2e.observe(p.totalMs / 1000);
    h.queue.observe(p.queueMs / 1000);
    h.prefill.observe(p.prefillMs / 1000);
    h.decode.observe(p.decodeMs / 1000);
    h.restore.observe(p.restoreMs / 1000);
    h.promptTokens.observe(turn.promptTokens);
    h.generationTokens.observe(turn.outputTokens);
  }

  checkpointWritten(reason: CheckpointReason, bytes: number, seconds: number): void {
    this.#c.writes.inc({ reason });
    this.#c.writeBytes.inc({ reason }, bytes);
    this.#h.write.observe({ reason }, seconds);
    if (reason === "parked") this.#c.preemptions.inc();
  }

  checkpointWriteFailed(reason: CheckpointReason): void {
    this.#c.writeFailures.inc({ reason });
  }

  /** A checkpoint load; `sessionRestore` when it restored a leased session (not a ladder prefix). */
  checkpointRead(
    reason: CheckpointReason,
    outcome: ReadOutcome,
    bytes: number,
    seconds: number,
    sessionRestore: boolean,
  ): void {
    this.#c.reads.inc({ reason, outcome });
    if (outcome === "ok") {
      this.#c.readBytes.inc({ reason }, bytes);
      this.#h.read.observe({ reason }, seconds);
    }
    if (sessionRestore) this.#c.restores.inc({ outcome });
  }

  prefixLookup(hit: boolean): void {
    this.#c.lookups.inc({ result: hit ? "hit" : "miss" });
  }

  replicaOperation(operation: ReplicaOperation, ok: boolean, seconds: number): void {
    this.#c.replicaOps.inc({ operation });
    if (!ok) this.#c.replicaFailures.inc({ operation });
    this.#h.replica.observe({ operation }, seconds);
  }

  #defineGauges(read: () => WorkerGauges): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, value: (g: WorkerGauges) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(value(read()));
        },
      });
    gauge("frontier:num_requests_running", "Requests holding a session (prefill or decode).", (g) => g.running);
    gauge("frontier:num_requests_waiting", "Requests waiting for a free sequence.", (g) => g.waiting);
    defineQueueMetrics(registers, () => read().queue);
    gauge("frontier:kv_cache_usage_perc", "KV-cache usage: tokens held / cells (1 = 100%).", (g) =>
      g.kvCapacity > 0 ? g.kvTokens / g.kvCapacity : 0,
    );
    gauge("frontier:sessions_resident", "Sessions holding a sequence.", (g) => g.residentSessions);
    gauge("frontier:sessions_parked", "Sessions parked to a checkpoint.", (g) => g.parkedSessions);
    gauge("frontier:checkpoint_store_bytes", "Bytes of the local checkpoint store.", (g) => g.checkpoints?.bytes ?? 0);
    gauge(
      "frontier:checkpoint_store_budget_bytes",
      "Disk budget of the checkpoint store.",
      (g) => g.checkpoints?.budgetBytes ?? 0,
    );
    new Counter({
      name: "frontier:checkpoint_evictions_total",
      help: "Checkpoints the store evicted since it opened, by reason (tenant-share, budget, disk-full).",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(read().checkpoints?.evictions ?? {})) this.inc({ reason }, count);
      },
    });
    new Counter({
      name: "frontier:checkpoint_skipped_total",
      help: "Session checkpoints not written because the session held no tenant data key, by reason.",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(read().checkpointsSkippedWithoutKey ?? {})) {
          this.inc({ reason }, count);
        }
      },
    });
    new Gauge({
      name: "frontier:checkpoints",
      help: "Checkpoints in the local index, by reason.",
      labelNames: ["reason"],
      registers,
      collect() {
        this.reset();
        for (const [reason, count] of Object.entries(read().checkpoints?.byReason ?? {})) this.set({ reason }, count);
      },
    });
  }
}
