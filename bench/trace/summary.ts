/**
 * One target's replay, summarised against the scaled trace's ceilings: prefix reuse (both readings),
 * tokens prefilled, TTFT / end-to-end percentiles, throughput and queueing.
 */
import { percentile } from "../stats.ts";
import type { ReplayRun } from "./replay.ts";
import type { ScaledTrace } from "./scale.ts";

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

export interface SystemSummary {
  target: string;
  requests: number;
  failed: number;
  /** Cached / prompt tokens, as the target counted both (its own output in context included). */
  reuse: number;
  /** Cached tokens capped at each request's trace-block ceiling, over the trace's input tokens. */
  reuse_blocks_only: number;
  /** reuse / the with-own-output ceiling. */
  reuse_vs_ceiling: number;
  /** reuse_blocks_only / the blocks-only ceiling. */
  reuse_blocks_vs_ceiling: number;
  prompt_tokens: number;
  cached_tokens: number;
  prefilled_tokens: number;
  output_tokens: number;
  ttft_ms: Percentiles;
  e2e_ms: Percentiles;
  wall_s: number;
  output_tokens_per_s: number;
  prompt_tokens_per_s: number;
  /** Requests of the same target already in flight when each was sent. */
  in_flight_at_send: { mean: number; max: number };
  /** The target's own queue-time figure (see the report for how each measures it); NaN when it has none. */
  queue_ms: { mean: number; p90: number };
  /** Mean ms a next turn was sent after its trace arrival, waiting for the turn it continues. */
  late_ms_mean: number;
}

function percentiles(values: readonly number[]): Percentiles {
  return { p50: percentile(values, 50), p90: percentile(values, 90), p99: percentile(values, 99) };
}

const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;

/** `queueMeanMs` overrides the per-request queue times (Frontier's come from its worker metrics). */
export function summarise(trace: ScaledTrace, run: ReplayRun, queueMeanMs?: number): SystemSummary {
  const ok = run.requests;
  const total = (f: (r: (typeof ok)[number]) => number) => ok.reduce((s, r) => s + f(r), 0);
  const prompt = total((r) => r.promptTokens);
  const cached = total((r) => r.cachedTokens);
  const output = total((r) => r.outputTokens);
  const traceInput = ok.reduce((s, r) => s + (trace.requests[r.id]?.inputLength ?? 0), 0);
  const blocksCached = ok.reduce((s, r) => s + Math.min(r.cachedTokens, trace.requests[r.id]?.blockReusable ?? 0), 0);
  const reuse = prompt === 0 ? 0 : cached / prompt;
  const reuseBlocks = traceInput === 0 ? 0 : blocksCached / traceInput;
  const queues = ok.flatMap((r) => (r.queueMs === undefined ? [] : [r.queueMs]));
  const wallS = run.wallMs / 1000;
  return {
    target: run.target,
    requests: ok.length,
    failed: run.failures.length,
    reuse,
    reuse_blocks_only: reuseBlocks,
    reuse_vs_ceiling: trace.ceiling.withOwnOutput === 0 ? Number.NaN : reuse / trace.ceiling.withOwnOutput,
    reuse_blocks_vs_ceiling: trace.ceiling.blocks === 0 ? Number.NaN : reuseBlocks / trace.ceiling.blocks,
    prompt_tokens: prompt,
    cached_tokens: cached,
    prefilled_tokens: prompt - cached,
    output_tokens: output,
    ttft_ms: percentiles(ok.map((r) => r.ttftMs)),
    e2e_ms: percentiles(ok.map((r) => r.e2eMs)),
    wall_s: wallS,
    output_tokens_per_s: output / wallS,
    prompt_tokens_per_s: prompt / wallS,
    in_flight_at_send: { mean: mean(ok.map((r) => r.inFlight)), max: Math.max(0, ...ok.map((r) => r.inFlight)) },
    queue_ms: {
      mean: queueMeanMs ?? mean(queues),
      p90: queueMeanMs === undefined ? percentile(queues, 90) : Number.NaN,
    },
    late_ms_mean: mean(ok.filter((r) => trace.requests[r.id]?.parent !== undefined).map((r) => r.lateMs)),
  };
}

/** Cumulative reuse (cached / prompt tokens) after each finished request, by replay time. */
export function reuseOverTime(run: ReplayRun): [number, number][] {
  const byEnd = [...run.requests].sort((a, b) => a.sentMs + a.e2eMs - (b.sentMs + b.e2eMs));
  let prompt = 0;
  let cached = 0;
  return byEnd.map((r) => {
    prompt += r.promptTokens;
    cached += r.cachedTokens;
    return [(r.sentMs + r.e2eMs) / 1000, prompt === 0 ? 0 : cached / prompt];
  });
}
