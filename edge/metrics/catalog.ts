/** Every metric the edge exports: name, type, help, and the buckets of its histograms. */
export type MetricType = "counter" | "gauge" | "histogram";

export interface MetricInfo {
  type: MetricType;
  help: string;
  buckets?: readonly number[];
}

/** Seconds: from 5 ms (a rejected request) to 10 minutes (a long streamed turn). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export const EDGE_METRICS = {
  "frontier:edge_requests_total": { type: "counter", help: "HTTP requests by route, method and status." },
  "frontier:edge_request_duration_seconds": {
    type: "histogram",
    help: "Time to the response's headers, by route.",
    buckets: LATENCY_BUCKETS,
  },
  "frontier:edge_turns_total": {
    type: "counter",
    help: "Finished turns by protocol, cache decision, miss reason and placement of a new session.",
  },
  "frontier:edge_turn_duration_seconds": {
    type: "histogram",
    help: "A turn from the request to the end of its response (streams included), by protocol.",
    buckets: LATENCY_BUCKETS,
  },
  "frontier:edge_prompt_tokens_total": { type: "counter", help: "Prompt tokens of finished turns, by protocol." },
  "frontier:edge_cached_tokens_total": { type: "counter", help: "Prompt tokens reused by the worker, by protocol." },
  "frontier:edge_failovers_total": {
    type: "counter",
    help: "Turns moved to another worker before the first byte, by reason.",
  },
  "frontier:edge_streams_cut_total": {
    type: "counter",
    help: "Generate streams the edge cut because the worker missed a deadline, by deadline (connect, first_event, idle).",
  },
  "frontier:edge_workers_marked_down_total": {
    type: "counter",
    help: "Workers the edge marked down after a call to them failed, by reason (unreachable, lost, deadline).",
  },
  "frontier:pool_workers": { type: "gauge", help: "Pool members by region and state (up, down, draining, drained)." },
  "frontier:pool_worker_sequences_free": { type: "gauge", help: "Free sequences a worker last reported." },
  "frontier:pool_worker_sessions_resident": { type: "gauge", help: "Resident sessions a worker last reported." },
  "frontier:pool_worker_queue_depth": { type: "gauge", help: "Queued requests a worker last reported." },
  "frontier:pool_placements_total": {
    type: "counter",
    help: "New sessions placed, of them with a known prefix and on its holder (kind).",
  },
  "frontier:pool_registrations_refused_total": {
    type: "counter",
    help: "Worker heartbeats the pool refused, by reason (bad-token, revoked, url-not-bound, static-worker, …).",
  },
  "frontier:edge_response_store_refusals_total": {
    type: "counter",
    help: "store: true turns refused by the tenant's record quota, by tenant and reason (record-too-large, over-quota).",
  },
  "frontier:tenant_response_store_bytes": {
    type: "gauge",
    help: "Bytes of stored Responses records a tenant holds across its sessions (its ledger, read at scrape).",
  },
  "frontier:tenant_response_store_records": {
    type: "gauge",
    help: "Stored Responses records a tenant holds across its sessions.",
  },
  "frontier:tenant_turns_total": { type: "counter", help: "Turns counted for billing, by tenant and key id." },
  "frontier:tenant_tokens_total": {
    type: "counter",
    help: "Billed tokens by tenant, key id and kind (input, cached, prefilled, output).",
  },
  "frontier:tenant_spend_total": {
    type: "counter",
    help: "What a tenant's turns cost at the price table's versions that costed them, in currency units.",
  },
  "frontier:tenant_limit_refusals_total": {
    type: "counter",
    help: "Requests a tenant's authority refused, by tenant and reason (key, model, concurrency, requests, tokens, budget).",
  },
} as const satisfies Record<string, MetricInfo>;

export type EdgeMetricName = keyof typeof EDGE_METRICS;

/**
 * One increment: a counter, or a histogram's `_sum` / `_count`, or one hit of a histogram's bucket
 * (`_bucket` with its `le`: stored per bucket, read back cumulative; metrics/histogram.ts).
 */
export interface MetricIncrement {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export type MetricSample = MetricIncrement;
