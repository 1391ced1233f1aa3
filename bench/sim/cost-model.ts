/**
 * What each step costs a simulated worker, in virtual milliseconds. The default rates were measured on
 * this project's 2-core CPU VM with the generated `tiny` model (2026-12-04,
 * `npm run bench -- --only sessions --size tiny --restore-tokens 8000 --reps 2 --no-record`):
 * re-prefill of 8,000 tokens 3,186 ms (2,511 tok/s), checkpoint restore of the same 8.6 ms
 * (930k tok/s, checksum + load), aggregate decode 2,802 tok/s at 8 sessions (350 tok/s each).
 * Parking writes the KV state at the restore rate (the dump is the same bytes read back).
 *
 * Copying a shared prefix from another resident sequence (llama.cpp's sequence copy, the shared-prefix
 * rung) was measured with the `mid` model only (`npm run bench -- --only prefix-copy --restore-tokens
 * 2000,8000 --reps 2`, 2026-12-06, docs/benchmarks.md "prefix copy" rows): 8,000 tokens copied at
 * 29.71 ms per 1k tokens, 464x faster than prefilling them (13,224 ms per 1k). The simulation keeps
 * that ratio on the tiny prefill rate: 2,511 × 464 ≈ 1,165,000 tok/s. (At 2,000 tokens the same bench
 * read 376 ms per 1k, 49x: the first copy into a sequence pays its page faults; `--rates copy=123000`
 * is that pessimistic reading.)
 * `--rates prefill=…,decode=…,restore=…,copy=…` replaces them (tokens per second).
 */

export interface CostModel {
  /** Prompt tokens per second, one prefill at a time per worker. */
  prefillTokensPerSecond: number;
  /** Output tokens per second per sequence (decode batches across sequences). */
  decodeTokensPerSecond: number;
  /** Checkpoint tokens restored (or dumped when parking) per second. */
  restoreTokensPerSecond: number;
  /** Shared-prefix tokens copied per second from another resident sequence (llama_memory_seq_cp). */
  copyTokensPerSecond: number;
  /** Where the rates came from, for the report. */
  source: string;
}

export const MEASURED_TINY_CPU: CostModel = {
  prefillTokensPerSecond: 2511,
  decodeTokensPerSecond: 350,
  restoreTokensPerSecond: 930_000,
  copyTokensPerSecond: 1_165_000,
  source:
    "measured 2026-12-04 on the 2-core AMD EPYC VM, generated `tiny` model, `sessions` workload (prefill 8k tokens 3,186 ms; restore 8.6 ms; decode 2,802 tok/s at 8 sessions); prefix copy 464x faster than prefill (`prefix-copy`, 8k tokens, `mid` model, 2026-12-06)",
};

export function parseRates(text: string, base: CostModel = MEASURED_TINY_CPU): CostModel {
  const out = { ...base, source: `--rates ${text}` };
  for (const part of text.split(",")) {
    const [name, raw] = part.split("=");
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--rates: ${part}: expected name=positive number`);
    if (name === "prefill") out.prefillTokensPerSecond = value;
    else if (name === "decode") out.decodeTokensPerSecond = value;
    else if (name === "restore") out.restoreTokensPerSecond = value;
    else if (name === "copy") out.copyTokensPerSecond = value;
    else throw new Error(`--rates: unknown rate ${name} (prefill, decode, restore, copy)`);
  }
  return out;
}

export const costMs = (tokens: number, perSecond: number): number => (tokens * 1000) / perSecond;
