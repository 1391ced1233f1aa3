/**
 * Histogram bucket boundaries (seconds) as vLLM's Prometheus logger defines them, so a dashboard
 * built on `vllm:*` histograms reads `frontier:*` ones with the prefix changed and nothing else.
 */

/** `vllm:time_to_first_token_seconds`. */
export const TTFT_BUCKETS = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];

/** `vllm:inter_token_latency_seconds` (and `vllm:time_per_output_token_seconds`). */
export const INTER_TOKEN_BUCKETS = [
  0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];

/** `vllm:e2e_request_latency_seconds`, `vllm:request_{queue,prefill,decode}_time_seconds`. */
export const REQUEST_LATENCY_BUCKETS = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];

/** Frontier's own I/O timings (checkpoint reads/writes, S3 requests): 1 ms to 2 minutes. */
export const IO_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

/** vLLM's `build_1_2_5_buckets(max)`: 1, 2, 5, 10, 20, 50, … up to `max` (token-count histograms). */
export function oneTwoFiveBuckets(max: number): number[] {
  const out: number[] = [];
  for (let exponent = 1; ; exponent *= 10) {
    for (const mantissa of [1, 2, 5]) {
      const value = mantissa * exponent;
      if (value > max) return out;
      out.push(value);
    }
  }
}
