/**
 * What the edge observes per request and per turn, sent to the EdgeMetricsDO after the response. A
 * request's observations (its own and its turn's) are gathered per `ResponseSent` and go out in one
 * call once the client has the whole response (`sent.after`, so the request's waitUntil covers it:
 * nothing is held in the isolate past its request). A failed report is logged and dropped: metrics
 * never fail or slow a request.
 */

import { log } from "../core/log.ts";
import type { ResponseSent } from "../core/response-sent.ts";
import type { DeadlineKind } from "../worker/stream-deadlines.ts";
import type { FailoverReason, WorkerDownReason } from "../worker/worker-errors.ts";
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
  [/^\/v1\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/, "/v1/models/:model:$1"],
  [/^\/v1\/models\/[^/]+$/, "/v1/models/:id"],
  [/^\/v1beta\/models$/, "/v1beta/models"],
  [/^\/v1beta\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/, "/v1beta/models/:model:$1"],
  [/^\/v1beta\/models\/[^/]+$/, "/v1beta/models/:model"],
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

/** Count the request once `sent` says the client has it all (with its turn's metrics, in one call). */
export function recordRequest(
  env: MetricsBindings,
  sent: ResponseSent,
  request: Request,
  status: number,
  seconds: number,
): void {
  const route = routeOf(new URL(request.url).pathname);
  const method = METHODS.has(request.method) ? request.method : "other";
  reportOf(env, sent).increments.push(
    { name: "frontier:edge_requests_total", labels: { route, method, status: String(status) }, value: 1 },
    ...observation("frontier:edge_request_duration_seconds", { route }, seconds),
  );
}

/** Count a finished turn once `sent` says the client has it all (with its request's metrics, in one call). */
export function recordTurn(env: MetricsBindings, sent: ResponseSent, turn: RecentTurn, seconds: number): void {
  const { protocol } = turn;
  const labels = { protocol, decision: turn.decision, miss_reason: turn.miss, placement: turn.placement };
  const report = reportOf(env, sent, { forTurn: true });
  report.turn = turn;
  report.increments.push(
    { name: "frontier:edge_turns_total", labels, value: 1 },
    { name: "frontier:edge_prompt_tokens_total", labels: { protocol }, value: turn.prompt },
    { name: "frontier:edge_cached_tokens_total", labels: { protocol }, value: turn.cached },
    ...observation("frontier:edge_turn_duration_seconds", { protocol }, seconds),
  );
}

/** What one response's metrics call carries: its increments and (at most) one finished turn. */
interface Report {
  increments: MetricIncrement[];
  turn?: RecentTurn;
}

/** The report each response is gathering, until its call starts (per request: none outlives it). */
const gathering = new WeakMap<ResponseSent, Report>();

/**
 * The report `sent` is gathering, or a new one queued to go out once the client has the response. A
 * turn needs a report without one (the metrics object takes one turn per call).
 */
function reportOf(env: MetricsBindings, sent: ResponseSent, options: { forTurn?: boolean } = {}): Report {
  const open = gathering.get(sent);
  if (open && !(options.forTurn && open.turn)) return open;
  const report: Report = { increments: [] };
  gathering.set(sent, report);
  sent.after(() => {
    if (gathering.get(sent) === report) gathering.delete(sent);
    return send(env, report.increments, report.turn);
  });
  return report;
}

export function recordFailover(env: MetricsBindings, reason: FailoverReason): Promise<void> {
  return send(env, [{ name: "frontier:edge_failovers_total", labels: { reason }, value: 1 }]);
}

/** A worker the edge marked down after a failed call, and the deadline that cut its stream (if one did). */
export function recordWorkerDown(
  env: MetricsBindings,
  reason: WorkerDownReason,
  deadline: DeadlineKind | undefined,
): Promise<void> {
  const increments: MetricIncrement[] = [
    { name: "frontier:edge_workers_marked_down_total", labels: { reason }, value: 1 },
  ];
  if (deadline) increments.push({ name: "frontier:edge_streams_cut_total", labels: { deadline }, value: 1 });
  return send(env, increments);
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
