/**
 * Scaling a production trace down to a CPU run: block size and lengths shrink by the same factor
 * (blockTokens / 512), a sample of whole conversations (every turn of each sampled first turn) is
 * kept, and arrival times are compressed so the sample spans `spanSeconds`. The reuse ceilings are
 * computed on the scaled sample, in both readings: the trace's blocks only (an infinite prefix cache)
 * and with each conversation's own output kept (a follow-up can reuse its parent's prompt + output).
 */

import { seededRandom } from "./block-tokens.ts";
import { findParents } from "./conversations.ts";
import { BLOCK_TOKENS, type TraceRequest } from "./trace-file.ts";

export interface TraceScaling {
  /** Tokens per block after scaling (the trace's are 512). */
  blockTokens: number;
  /** Most requests in the sample (whole conversations are kept or left out). */
  maxRequests: number;
  /** The sample's arrivals are compressed to this span. */
  spanSeconds: number;
  seed: number;
}

export interface ScaledRequest {
  /** Position in the sample (arrival order). */
  id: number;
  traceIndex: number;
  arrivalMs: number;
  inputLength: number;
  outputLength: number;
  hashIds: readonly number[];
  /** The sample id of the request this one continues as the next turn (its output in context). */
  parent: number | undefined;
  conversation: number;
  turn: number;
  /** Tokens an infinite cache of the trace's blocks could reuse. */
  blockReusable: number;
  /** Tokens reusable when the parent's prompt and output are kept (= blockReusable for a first turn). */
  ownOutputReusable: number;
}

export interface ScaledTrace {
  scaling: TraceScaling;
  /** blockTokens / 512: lengths are multiplied by it. */
  factor: number;
  /** Trace ms per replay ms. */
  timeCompression: number;
  requests: ScaledRequest[];
  conversations: number;
  /** Follow-ups whose parent's output does not fit in their input (sent as first turns). */
  followUpsTooShort: number;
  /** Follow-ups of a parent that already had one (a branch of the conversation). */
  branches: number;
  ceiling: { blocks: number; withOwnOutput: number };
}

/** Scaled input: full blocks stay full, the partial last block shrinks by the factor (at least 1 token). */
export function scaleInput(inputLength: number, blockTokens: number): number {
  const full = Math.floor(inputLength / BLOCK_TOKENS);
  const rest = inputLength - full * BLOCK_TOKENS;
  if (rest === 0) return full * blockTokens;
  return full * blockTokens + Math.min(blockTokens, Math.max(1, Math.round((rest * blockTokens) / BLOCK_TOKENS)));
}

export function scaleOutput(outputLength: number, blockTokens: number): number {
  return Math.max(1, Math.round((outputLength * blockTokens) / BLOCK_TOKENS));
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = seededRandom(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function scaleTrace(trace: readonly TraceRequest[], scaling: TraceScaling): ScaledTrace {
  const { blockTokens, maxRequests, spanSeconds, seed } = scaling;
  const parents = findParents(trace, BLOCK_TOKENS);
  const rootOf: number[] = [];
  const members = new Map<number, number[]>();
  for (let i = 0; i < trace.length; i++) {
    const parent = parents[i];
    const root = parent === undefined ? i : (rootOf[parent] as number);
    rootOf.push(root);
    const list = members.get(root);
    if (list) list.push(i);
    else members.set(root, [i]);
  }
  const chosen: number[] = [];
  for (const root of shuffled([...members.keys()], seed)) {
    const tree = members.get(root) as number[];
    if (chosen.length + tree.length > maxRequests) continue;
    chosen.push(...tree);
    if (chosen.length === maxRequests) break;
  }
  chosen.sort((a, b) => a - b);
  const first = trace[chosen[0] ?? 0]?.timestamp ?? 0;
  const last = trace[chosen.at(-1) ?? 0]?.timestamp ?? 0;
  const timeCompression = last > first ? (last - first) / (spanSeconds * 1000) : 1;

  const sampleId = new Map<number, number>();
  const seen = new Set<string>();
  const childCount = new Map<number, number>();
  const conversationOf = new Map<number, number>();
  let followUpsTooShort = 0;
  let branches = 0;
  const requests = chosen.map((traceIndex, id): ScaledRequest => {
    sampleId.set(traceIndex, id);
    const r = trace[traceIndex] as TraceRequest;
    const inputLength = scaleInput(r.inputLength, blockTokens);
    const outputLength = scaleOutput(r.outputLength, blockTokens);
    let blockReusable = 0;
    let key = "";
    for (let b = 0; b < r.hashIds.length; b++) {
      key += `${r.hashIds[b]},`;
      if (seen.has(key)) blockReusable += Math.min(blockTokens, inputLength - b * blockTokens);
      else seen.add(key);
    }
    const root = rootOf[traceIndex] as number;
    if (!conversationOf.has(root)) conversationOf.set(root, conversationOf.size);
    const traceParent = parents[traceIndex];
    const parent = traceParent === undefined ? undefined : sampleId.get(traceParent);
    return {
      id,
      traceIndex,
      arrivalMs: (r.timestamp - first) / timeCompression,
      inputLength,
      outputLength,
      hashIds: r.hashIds,
      parent,
      conversation: conversationOf.get(root) as number,
      turn: 1,
      blockReusable,
      ownOutputReusable: blockReusable,
    };
  });
  for (const request of requests) {
    if (request.parent === undefined) continue;
    const parent = requests[request.parent] as ScaledRequest;
    const context = parent.inputLength + parent.outputLength;
    if (context >= request.inputLength) {
      followUpsTooShort++;
      request.parent = undefined;
      continue;
    }
    const children = (childCount.get(parent.id) ?? 0) + 1;
    childCount.set(parent.id, children);
    if (children > 1) branches++;
    request.turn = parent.turn + 1;
    request.ownOutputReusable = context;
  }
  const input = requests.reduce((s, r) => s + r.inputLength, 0);
  const sum = (f: (r: ScaledRequest) => number) => requests.reduce((s, r) => s + f(r), 0) / Math.max(1, input);
  return {
    scaling,
    factor: blockTokens / BLOCK_TOKENS,
    timeCompression,
    requests,
    conversations: conversationOf.size,
    followUpsTooShort,
    branches,
    ceiling: { blocks: sum((r) => r.blockReusable), withOwnOutput: sum((r) => r.ownOutputReusable) },
  };
}
