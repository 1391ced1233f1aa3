/**
 * What the edge observes per request and per turn, sent to the EdgeMetricsDO after the response
 * (the caller passes the promise to waitUntil). A failed report is logged and dropped: metrics never
 * fail or slow a request.
 */

import { log } from "../core/log.ts";
import type { FailoverReason } from "../worker/worker-errors.ts";
import type { MetricIncrement } from "./catalog.ts";
import type { MetricsBindings, RecentTurn } from "./edge-metrics-do.ts";
import { observation } from "./histogram.ts";

/** The route templates requests are counted under (a fixed set: no path values in labels). */
const ROUTES: [RegExp, string][] = [
  [/^\/$/, "/"],
  [/^\/healthz$/, "/healthz"],
  [/^\/v1\/messages$/, "/v1/messages"],
  [/^\/v1\/messages\/count_tokens$/, "/v1/messages/count_tokens"],
  [/^\/v1\/models$/, "/v1/models"],
  [/^\/v1\/models\/[^/]+$/, "/v1/models/:id"],
  [/^\/v1\/responses$/, "/v1/responses"],
  [/^\/v1\/responses\/[^/]+$/, "/v1/responses/:id"],
  [/^\/internal\/pool\/heartbeat$/, "/internal/pool/heartbeat"],
  [/^\/admin\/workers$/, "/admin/workers"],
  [/^\/admin\/workers\/[^/]+\/drain$/, "/admin/workers/:id/drain"],
  [/^\/admin\/worker-credentials$/, "/admin/worker-credentials"],
  [/^\/admin\/worker-credentials\/[^/]+$/, "/admin/worker-credentials/:id"],
  [/^\/admin\/(usage|metrics|status|status\.json)$/, "/admin/$1"],
];
const METHODS = new Set(["GET", "HEAD", "POST", "DELETE", "PUT", "PATCH", "OPTIONS"]);

export function routeOf(pathname: string): string {
  for (const [pattern, template] of ROUTES) {
    const match = pattern.exec(pathname);
    if (match) return template.replace("$1", match[1] ?? "");
  }
  return "other";
}

export function recordRequest(env: MetricsBindings, request: Request, status: number, seconds: number): Promise<void> {
  const route = routeOf(new URL(request.url).pathname);
  const method = METHODS.has(request.method) ? request.method : "other";
  return send(env, [
    { name: "frontier:edge_requests_total", labels: { route, method, status: String(status) }, value: 1 },
    ...observation("frontier:edge_request_duration_seconds", { route }, seconds),
  ]);
}

export function recordTurn(env: MetricsBindings, turn: RecentTurn, seconds: number): Promise<void> {
  const { protocol } = turn;
  const labels = { protocol, decision: turn.decision, miss_reason: turn.miss, placement: turn.placement };
  return send(
    env,
    [
      { name: "frontier:edge_turns_total", labels, value: 1 },
      { name: "frontier:edge_prompt_tokens_total", labels: { protocol }, value: turn.prompt },
      { name: "frontier:edge_cached_tokens_total", labels: { protocol }, value: turn.cached },
      ...observation("frontier:edge_turn_duration_seconds", { protocol }, seconds),
    ],
    turn,
  );
}

export function recordFailover(env: MetricsBindings, reason: FailoverReason): Promise<void> {
  return send(env, [{ name: "frontier:edge_failovers_total", labels: { reason }, value: 1 }]);
}

/** A worker heartbeat the pool refused (`reason`: registration-check.ts's RefusalReason). */
export function recordRegistrationRefused(env: MetricsBindings, reason: string): Promise<void> {
  return send(env, [{ name: "frontier:pool_registrations_refused_total", labels: { reason }, value: 1 }]);
}

/** The one EdgeMetricsDO. */
export function metricsStub(env: MetricsBindings) {
  return env.METRICS.getByName("edge");
}

async function send(env: MetricsBindings, increments: MetricIncrement[], turn?: RecentTurn): Promise<void> {
  try {
    await metricsStub(env).add(increments, turn);
  } catch (error) {
    log("metrics report failed", { error: String(error) });
  }
}
