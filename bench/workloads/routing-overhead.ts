/**
 * What the edge adds: the same small request through edge (workerd) + SessionDO + gRPC-Web, and
 * straight to the worker's h2c gRPC listener, interleaved on the same worker and session shape.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type MessageSchema, Role } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { EdgeDirect } from "../../scripts/stack.ts";
import { newSessionId } from "../../shared/ids.ts";
import { streamTurn } from "../clients/edge-client.ts";
import { benchGenerateRequest, benchWorkerClient, textContent, timeGenerate } from "../clients/worker-client.ts";
import { fmt, percentile } from "../stats.ts";
import type { Workload } from "../workload.ts";

export interface OverheadRow {
  edgeMs: number[];
  /** The same request to the same edge in workerd without wrangler (empty when not measured). */
  workerdMs: number[];
  directMs: number[];
  /** The edge's own `server-timing` steps per request (workerd without wrangler when measured, else via wrangler). */
  steps: Record<string, number>[];
}

export async function benchRoutingOverhead(
  edgeUrl: string,
  workerGrpcUrl: string,
  n: number,
  edgeDirect?: EdgeDirect,
): Promise<OverheadRow> {
  const client = benchWorkerClient(workerGrpcUrl);
  const hint = crypto.randomUUID();
  const body = { model: "m", max_tokens: 1, temperature: 0, messages: [{ role: "user", content: "ping" }] };
  // Both paths serve the same 1-message first turn on a fresh session each time (the edge branches a
  // repeated first turn to a new session), so both prefill the same ~30 tokens.
  const direct = () =>
    benchGenerateRequest({
      messages: [{ role: Role.USER, content: textContent("ping") }],
      sampling: { maxTokens: 1, temperature: 0 },
    });
  const row: OverheadRow = { edgeMs: [], workerdMs: [], directMs: [], steps: [] };
  for (let i = 0; i < n + 3; i++) {
    const edge = await streamTurn(edgeUrl, body, hint);
    const workerd = edgeDirect && (await streamTurn(edgeDirect.url, body, hint, edgeDirect.headers));
    const directMs = await timeGenerate(client, direct());
    if (i < 3) continue; // warm-up
    row.edgeMs.push(edge.ms);
    if (workerd) row.workerdMs.push(workerd.ms);
    row.directMs.push(directMs);
    row.steps.push((workerd || edge).serverTiming);
  }
  return row;
}

/**
 * A continuing turn (the agent loop's path): one conversation through the edge — via `wrangler dev`
 * and via workerd without wrangler alternately (both edges name the same hinted session on the same
 * worker) — and one straight to the worker, each
 * turn adding a user "ping" and replaying the assistant turn as "pong". Two resident sessions on two
 * sequences: no parking, no SessionDO creation; the edge opens and records an existing session.
 */
export async function benchContinuingOverhead(
  edgeUrl: string,
  workerGrpcUrl: string,
  n: number,
  edgeDirect?: EdgeDirect,
): Promise<OverheadRow> {
  const client = benchWorkerClient(workerGrpcUrl);
  const hint = crypto.randomUUID();
  const sessionId = newSessionId();
  const edgeMessages: unknown[] = [];
  const directMessages: MessageInitShape<typeof MessageSchema>[] = [];
  const edgeTurn = async (url: string, headers?: Record<string, string>) => {
    edgeMessages.push({ role: "user", content: "ping" });
    const body = { model: "m", max_tokens: 1, temperature: 0, messages: edgeMessages };
    const result = await streamTurn(url, body, hint, headers);
    edgeMessages.push({ role: "assistant", content: "pong" });
    return result;
  };
  const row: OverheadRow = { edgeMs: [], workerdMs: [], directMs: [], steps: [] };
  for (let i = 0; i < n + 3; i++) {
    const edge = await edgeTurn(edgeUrl);
    const workerd = edgeDirect && (await edgeTurn(edgeDirect.url, edgeDirect.headers));
    // The edge's conversation grew a turn per edge path: the direct one grows as many, timing the last,
    // so both sides run at the same depth.
    let directMs = 0;
    for (let turn = 0; turn < (workerd ? 2 : 1); turn++) {
      directMessages.push({ role: Role.USER, content: textContent("ping") });
      const request = benchGenerateRequest({
        sessionId,
        messages: directMessages,
        sampling: { maxTokens: 1, temperature: 0 },
      });
      directMs = await timeGenerate(client, request);
      directMessages.push({ role: Role.ASSISTANT, content: textContent("pong") });
    }
    if (i < 3) continue; // warm-up (and parking what earlier workloads left resident)
    row.edgeMs.push(edge.ms);
    if (workerd) row.workerdMs.push(workerd.ms);
    row.directMs.push(directMs);
    row.steps.push((workerd || edge).serverTiming);
  }
  return row;
}

export function overheadTable(row: OverheadRow, what: string): string {
  const p = (v: number[], q: number) => fmt(percentile(v, q), 2);
  const over = (q: number) => fmt(percentile(row.edgeMs, q) - percentile(row.directMs, q), 2);
  return [
    "| path | p50 ms | p99 ms |",
    "|---|---|---|",
    `| client → edge (workerd) → SessionDO → gRPC-Web → worker | ${p(row.edgeMs, 50)} | ${p(row.edgeMs, 99)} |`,
    ...(row.workerdMs.length > 0
      ? [
          `| the same edge in workerd without wrangler (no dev proxy, inspector or request log) | ${p(row.workerdMs, 50)} | ${p(row.workerdMs, 99)} |`,
        ]
      : []),
    `| client → worker gRPC (h2c) directly | ${p(row.directMs, 50)} | ${p(row.directMs, 99)} |`,
    `| **edge overhead** | **${over(50)}** | **${over(99)}** |`,
    ...(row.workerdMs.length > 0
      ? [
          `| **edge overhead without wrangler** | **${fmt(percentile(row.workerdMs, 50) - percentile(row.directMs, 50), 2)}** | **${fmt(percentile(row.workerdMs, 99) - percentile(row.directMs, 99), 2)}** |`,
        ]
      : []),
    "",
    `n = ${row.edgeMs.length} interleaved requests each (max_tokens 1, ${what}).`,
    "",
    stepsLine(row),
  ].join("\n");
}

/** The edge's own account (its `server-timing` header), median per step. */
function stepsLine(row: OverheadRow): string {
  const names = [...new Set(row.steps.flatMap((s) => Object.keys(s)))];
  if (names.length === 0) return "The edge sent no `server-timing` header.";
  const medians = names.map((name) => {
    const values = row.steps.flatMap((s) => (s[name] === undefined ? [] : [s[name]]));
    return `${name} ${fmt(percentile(values, 50), 1)}`;
  });
  return `The edge's \`server-timing\` (${row.workerdMs.length > 0 ? "workerd without wrangler" : "via `wrangler dev`"}), median ms per step up to the response headers: ${medians.join(", ")} (\`route\`: authenticate, validate, SessionDO \`open\` alongside the limiter; \`worker\`: the Generate call up to the worker's cache decision, its prefill included; the record before \`message_stop\` comes after the headers).`;
}

/** Median of the per-round differences (each round runs both paths back to back): steadier than a difference of medians. */
function pairedMedian(path: readonly number[], direct: readonly number[]): number {
  return percentile(
    path.map((ms, i) => ms - (direct[i] ?? Number.NaN)).filter((d) => Number.isFinite(d)),
    50,
  );
}

/** The ratio-table rows of one measurement: via `wrangler dev`, and without wrangler (wrangler's share). */
function summaryRows(row: OverheadRow, label: string) {
  const over = (q: number) => percentile(row.edgeMs, q) - percentile(row.directMs, q);
  const bare = percentile(row.workerdMs, 50) - percentile(row.directMs, 50);
  const withoutProxy =
    row.workerdMs.length === 0
      ? []
      : [
          {
            workload: "edge overhead",
            measure: `${label}: the edge in workerd without wrangler, p50; wrangler dev's share`,
            value: `${fmt(bare, 2)} ms`,
            spread: `wrangler dev ${fmt(over(50) - bare, 2)} ms of the ${fmt(over(50), 2)} ms; paired per round ${fmt(pairedMedian(row.workerdMs, row.directMs), 2)} ms (n=${row.workerdMs.length})`,
          },
        ];
  return [
    {
      workload: "edge overhead",
      measure: `${label}: edge + SessionDO + gRPC-Web vs worker gRPC directly, p50 / p99`,
      value: `${fmt(over(50), 2)} / ${fmt(over(99), 2)} ms`,
      spread: `edge p50 ${fmt(percentile(row.edgeMs, 50), 2)} ms, direct p50 ${fmt(percentile(row.directMs, 50), 2)} ms; paired per round ${fmt(pairedMedian(row.edgeMs, row.directMs), 2)} ms (n=${row.edgeMs.length})`,
    },
    ...withoutProxy,
  ];
}

export const routingOverheadWorkload: Workload = {
  name: "routing",
  needsStack: true,
  async run({ options, stack, progress }) {
    if (!stack) throw new Error("routing needs the stack");
    const n = options.quick ? 10 : 50;
    progress(`edge overhead: ${n} interleaved first turns on new sessions each way`);
    const fresh = await benchRoutingOverhead(stack.edgeUrl, stack.workerGrpcUrl, n, stack.edgeDirect);
    progress(`edge overhead: ${n} interleaved continuing turns each way`);
    const continuing = await benchContinuingOverhead(stack.edgeUrl, stack.workerGrpcUrl, n, stack.edgeDirect);
    return {
      summary: [...summaryRows(fresh, "new session"), ...summaryRows(continuing, "continuing turn")],
      section: [
        "## Routing overhead (loopback)",
        "",
        "### A first turn on a new session",
        "",
        overheadTable(fresh, "a 1-message first turn on a fresh session; the worker parks an idle session for each"),
        "",
        "### A continuing turn (one session each way, nothing parked)",
        "",
        overheadTable(continuing, "the next turn of one growing conversation each way"),
        "",
      ].join("\n"),
    };
  },
};
