/**
 * What the edge adds: the same small request through edge (workerd) + SessionDO + gRPC-Web, and
 * straight to the worker's h2c gRPC listener, interleaved on the same worker and session shape.
 */
import { create } from "@bufbuild/protobuf";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { DEV_WORKER_TOKEN } from "../gpu-worker/config.ts";
import { GenerateRequestSchema, Role, WorkerService } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import type { EdgeDirect } from "../scripts/stack.ts";
import { newSessionId } from "../shared/ids.ts";
import { streamTurn } from "./edge-client.ts";
import { fmt, percentile } from "./stats.ts";
import type { Workload } from "./workload.ts";

/** The worker requires the shared worker token on every call (dev default here). */
export const workerAuth: Interceptor = (next) => (request) => {
  request.header.set("authorization", `Bearer ${process.env.FRONTIER_WORKER_TOKEN || DEV_WORKER_TOKEN}`);
  return next(request);
};

export interface OverheadRow {
  edgeMs: number[];
  /** The same request to workerd without `wrangler dev`'s proxy (empty when it was not found). */
  workerdMs: number[];
  directMs: number[];
}

export async function benchRoutingOverhead(
  edgeUrl: string,
  workerGrpcUrl: string,
  n: number,
  edgeDirect?: EdgeDirect,
): Promise<OverheadRow> {
  const client = createClient(
    WorkerService,
    createGrpcTransport({ baseUrl: workerGrpcUrl, interceptors: [workerAuth] }),
  );
  const hint = crypto.randomUUID();
  const body = { model: "m", max_tokens: 1, temperature: 0, messages: [{ role: "user", content: "ping" }] };
  // Both paths serve the same 1-message first turn on a fresh session each time (the edge branches a
  // repeated first turn to a new session), so both prefill the same ~30 tokens.
  const direct = () =>
    create(GenerateRequestSchema, {
      requestId: "bench",
      tenantId: "local",
      sessionId: newSessionId(),
      idKinds: { message: "msg", toolCall: "toolu" },
      conversation: {
        messages: [{ role: Role.USER, content: [{ block: { case: "text", value: { text: "ping" } } }] }],
      },
      sampling: { maxTokens: 1, temperature: 0 },
    });
  const row: OverheadRow = { edgeMs: [], workerdMs: [], directMs: [] };
  for (let i = 0; i < n + 3; i++) {
    const edge = await streamTurn(edgeUrl, body, hint);
    const workerd = edgeDirect && (await streamTurn(edgeDirect.url, body, hint, edgeDirect.headers));
    const started = performance.now();
    for await (const _ of client.generate(direct())) {
      // drain
    }
    const directMs = performance.now() - started;
    if (i < 3) continue; // warm-up
    row.edgeMs.push(edge.ms);
    if (workerd) row.workerdMs.push(workerd.ms);
    row.directMs.push(directMs);
  }
  return row;
}

export function overheadTable(row: OverheadRow): string {
  const p = (v: number[], q: number) => fmt(percentile(v, q), 2);
  const over = (q: number) => fmt(percentile(row.edgeMs, q) - percentile(row.directMs, q), 2);
  return [
    "| path | p50 ms | p99 ms |",
    "|---|---|---|",
    `| client → edge (workerd) → SessionDO → gRPC-Web → worker | ${p(row.edgeMs, 50)} | ${p(row.edgeMs, 99)} |`,
    ...(row.workerdMs.length > 0
      ? [
          `| the same, to workerd without \`wrangler dev\`'s proxy | ${p(row.workerdMs, 50)} | ${p(row.workerdMs, 99)} |`,
        ]
      : []),
    `| client → worker gRPC (h2c) directly | ${p(row.directMs, 50)} | ${p(row.directMs, 99)} |`,
    `| **edge overhead** | **${over(50)}** | **${over(99)}** |`,
    ...(row.workerdMs.length > 0
      ? [
          `| **edge overhead without wrangler's proxy** | **${fmt(percentile(row.workerdMs, 50) - percentile(row.directMs, 50), 2)}** | **${fmt(percentile(row.workerdMs, 99) - percentile(row.directMs, 99), 2)}** |`,
        ]
      : []),
    "",
    `n = ${row.edgeMs.length} interleaved requests each (max_tokens 1, a 1-message first turn on a fresh session).`,
  ].join("\n");
}

export const routingOverheadWorkload: Workload = {
  name: "routing",
  needsStack: true,
  async run({ options, stack, progress }) {
    if (!stack) throw new Error("routing needs the stack");
    const n = options.quick ? 10 : 50;
    progress(`edge overhead: ${n} interleaved requests each way`);
    const row = await benchRoutingOverhead(stack.edgeUrl, stack.workerGrpcUrl, n, stack.edgeDirect);
    const over = (q: number) => percentile(row.edgeMs, q) - percentile(row.directMs, q);
    const bare = percentile(row.workerdMs, 50) - percentile(row.directMs, 50);
    const withoutProxy =
      row.workerdMs.length === 0
        ? []
        : [
            {
              workload: "edge overhead",
              measure: "the same without `wrangler dev`'s proxy (workerd directly), p50; the proxy's share",
              value: `${fmt(bare, 2)} ms`,
              spread: `proxy ${fmt(over(50) - bare, 2)} ms of the ${fmt(over(50), 2)} ms (n=${row.workerdMs.length})`,
            },
          ];
    return {
      summary: [
        {
          workload: "edge overhead",
          measure: "edge + SessionDO + gRPC-Web vs worker gRPC directly, p50 / p99",
          value: `${fmt(over(50), 2)} / ${fmt(over(99), 2)} ms`,
          spread: `edge p50 ${fmt(percentile(row.edgeMs, 50), 2)} ms, direct p50 ${fmt(percentile(row.directMs, 50), 2)} ms (n=${row.edgeMs.length})`,
        },
        ...withoutProxy,
      ],
      section: ["## Routing overhead (loopback)", "", overheadTable(row), ""].join("\n"),
    };
  },
};
