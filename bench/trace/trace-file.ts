/**
 * Request traces in the Mooncake JSONL format (../shared/traces/README.md): one JSON object per line,
 * `{timestamp, input_length, output_length, hash_ids}`. `timestamp` is the arrival in ms from the
 * first request, lengths are tokens, `hash_ids` are the prompt's prefix blocks (BLOCK_TOKENS tokens
 * each; equal ids at equal positions are the same prefix). Shared by the trace replay (bench/trace/)
 * and the pool simulation (bench/sim/). A malformed line is an error naming its line and field.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/stack.ts";

/** Tokens per hash block in the Mooncake traces. */
export const BLOCK_TOKENS = 512;

export interface TraceRequest {
  /** 0-based position in the file (blank lines skipped). */
  index: number;
  /** Arrival, ms from the first request. */
  timestamp: number;
  inputLength: number;
  outputLength: number;
  hashIds: readonly number[];
}

export class TraceFormatError extends Error {
  constructor(
    readonly line: number,
    readonly field: string,
    message: string,
  ) {
    super(`trace line ${line}: ${field}: ${message}`);
    this.name = "TraceFormatError";
  }
}

function nonNegativeInteger(value: unknown, line: number, field: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new TraceFormatError(
      line,
      field,
      `expected a non-negative integer, got ${JSON.stringify(value) ?? "nothing"}`,
    );
  }
  return value;
}

/** One line (1-based `line` for errors) into a request. */
export function parseTraceLine(text: string, line: number, index: number, blockTokens = BLOCK_TOKENS): TraceRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TraceFormatError(line, "(line)", `not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TraceFormatError(line, "(line)", "expected a JSON object");
  }
  const record = value as Record<string, unknown>;
  const timestamp = nonNegativeInteger(record.timestamp, line, "timestamp");
  const inputLength = nonNegativeInteger(record.input_length, line, "input_length");
  const outputLength = nonNegativeInteger(record.output_length, line, "output_length");
  const hashes = record.hash_ids;
  if (!Array.isArray(hashes)) throw new TraceFormatError(line, "hash_ids", "expected an array of integers");
  const hashIds = hashes.map((h, i) => nonNegativeInteger(h, line, `hash_ids.${i}`));
  const blocks = Math.ceil(inputLength / blockTokens);
  if (hashIds.length !== blocks) {
    throw new TraceFormatError(
      line,
      "hash_ids",
      `${hashIds.length} blocks for input_length ${inputLength} (expected ${blocks} of ${blockTokens} tokens)`,
    );
  }
  return { index, timestamp, inputLength, outputLength, hashIds };
}

/** A whole trace's text; requests in file order, which must be arrival order. */
export function parseTrace(text: string, blockTokens = BLOCK_TOKENS): TraceRequest[] {
  const out: TraceRequest[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]?.trim() ?? "";
    if (raw === "") continue;
    const request = parseTraceLine(raw, i + 1, out.length, blockTokens);
    const previous = out[out.length - 1];
    if (previous && request.timestamp < previous.timestamp) {
      throw new TraceFormatError(
        i + 1,
        "timestamp",
        `${request.timestamp} is before the previous line's ${previous.timestamp}`,
      );
    }
    out.push(request);
  }
  if (out.length === 0) throw new TraceFormatError(1, "(file)", "no requests");
  return out;
}

export function readTrace(path: string, blockTokens = BLOCK_TOKENS): TraceRequest[] {
  return parseTrace(readFileSync(path, "utf8"), blockTokens);
}

/**
 * The trace's prefix-reuse ceiling with an infinite cache: of all input tokens, those in full blocks
 * whose prefix (every id up to and including the block) an earlier request already had.
 */
export function infiniteCacheCeiling(requests: readonly TraceRequest[], blockTokens = BLOCK_TOKENS): number {
  const seen = new Set<string>();
  let input = 0;
  let reused = 0;
  for (const r of requests) {
    input += r.inputLength;
    let key = "";
    for (let b = 0; b < r.hashIds.length; b++) {
      key += `${r.hashIds[b]},`;
      const tokens = Math.min(blockTokens, r.inputLength - b * blockTokens);
      if (seen.has(key)) reused += tokens;
      else seen.add(key);
    }
  }
  return input === 0 ? 0 : reused / input;
}

/** The full Mooncake conversation trace, where this checkout sits beside the team's `shared/` folder. */
const FULL_TRACE = join(REPO_ROOT, "../shared/traces/mooncake-conversation.jsonl");
/** Its first 600 requests, shipped with the repo (Apache-2.0, bench/trace/README.md): CI has no `../shared/`. */
export const SAMPLE_TRACE = join(REPO_ROOT, "bench/trace/mooncake-sample.jsonl");

/** The trace a workload reads when `--trace` is not given: the full one if present, else the sample. */
export function defaultTracePath(): string {
  return existsSync(FULL_TRACE) ? FULL_TRACE : SAMPLE_TRACE;
}
