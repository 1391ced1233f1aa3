/**
 * The Responses agent loop over both transports in the same run: HTTP (a POST per turn, SSE) and
 * WebSocket (one socket per loop, a `response.create` per turn). Both send the same bodies: the
 * instructions and tools every turn (the API does not carry them over), and on later turns only
 * `previous_response_id` + the `function_call_output` items. Per continued turn: the bytes the client
 * sent, the client-observed time to the first output item and to completion, and (HTTP) the edge's
 * `server-timing` route step (finding the session: the SessionDO `open`, alongside the tenant
 * limiter), which a socket turn runs the same way. The order of the two loops alternates by run.
 * Correctness check (not a timing assertion): every continued turn prefills exactly its suffix.
 */

import { httpTurn, SocketClient, type TransportTurn } from "../clients/responses-ws-client.ts";
import { fmt, median } from "../stats.ts";
import { filler, hash32 } from "../text.ts";
import type { SummaryRow, Workload, WorkloadContext } from "../workload.ts";
import { buildAgentSetup } from "./agent-loop.ts";

type Transport = "http" | "websocket";

interface LoopTurn {
  transport: Transport;
  run: number;
  turn: number;
  result: TransportTurn;
  prefilled: number;
  suffix: number | undefined;
  /** The worker's own time for the turn (its `turn finished` line's total_ms). */
  workerMs: number;
}

/**
 * The worker's `total_ms` for the turn that just ended: the first `turn finished` line written since
 * `from` (turns run one at a time). Its stderr can reach the parent a moment after the last event.
 */
async function workerTurnMs(logs: readonly string[], from: number): Promise<number> {
  for (let wait = 0; wait < 40; wait++) {
    const line = logs.slice(from).find((l) => l.includes(" turn finished "));
    const ms = line && /\btotal_ms=([\d.]+)/.exec(line)?.[1];
    if (ms) return Number(ms);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return Number.NaN;
}

/** One agent loop of `turns` turns through `send`; the outputs of each turn's calls go into the next. */
async function agentLoop(
  send: (body: object) => Promise<TransportTurn>,
  base: object,
  turns: number,
  label: string,
  words: number,
  logs: readonly string[],
): Promise<Omit<LoopTurn, "transport" | "run" | "prefilled">[]> {
  const done: Omit<LoopTurn, "transport" | "run" | "prefilled">[] = [];
  let previous: TransportTurn | undefined;
  for (let turn = 1; turn <= turns; turn++) {
    const outputs = (previous?.calls ?? []).map((call) => ({
      type: "function_call_output",
      call_id: call.call_id,
      output: filler(words, hash32(`${label}:${turn}:${call.call_id}`)),
    }));
    const from = logs.length;
    const result = await send({
      ...base,
      input: previous ? outputs : [{ role: "user", content: `${label}: fix the failing test, then run the suite.` }],
      ...(previous ? { previous_response_id: previous.id } : {}),
    });
    const suffix = previous ? result.inputTokens - (previous.inputTokens + previous.outputTokens) : undefined;
    done.push({ turn, result, suffix, workerMs: await workerTurnMs(logs, from) });
    if (result.calls.length === 0) break;
    previous = result;
  }
  return done;
}

const kb = (bytes: number) => `${fmt(bytes / 1024)} KB`;

export const responsesWsWorkload: Workload = {
  name: "responses-ws",
  needsStack: true,
  async run({ options, stack, progress }: WorkloadContext) {
    if (!stack) throw new Error("responses-ws needs the stack");
    const setup = await buildAgentSetup(stack.edgeUrl, options.agentPrefixTokens);
    const tools = setup.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.input_schema,
    }));
    const base = {
      model: "frontier-test",
      instructions: setup.system,
      tools,
      tool_choice: "required",
      max_output_tokens: 400,
    };
    const words = options.quick ? 20 : 120;
    const turns: LoopTurn[] = [];
    for (let run = 1; run <= options.reps; run++) {
      const order: Transport[] = run % 2 === 1 ? ["http", "websocket"] : ["websocket", "http"];
      for (const transport of order) {
        progress(`responses ws vs http ${run}/${options.reps}: ${options.agentTurns} turns over ${transport}`);
        const label = `run ${run} ${transport}`;
        let socket: SocketClient | undefined;
        if (transport === "websocket") socket = new SocketClient(stack.edgeUrl);
        const send = socket ? (body: object) => socket.turn(body) : (body: object) => httpTurn(stack.edgeUrl, body);
        try {
          for (const t of await agentLoop(send, base, options.agentTurns, label, words, stack.workerLogs)) {
            const prefilled = t.result.inputTokens - t.result.cachedTokens;
            turns.push({ transport, run, ...t, prefilled });
          }
        } finally {
          socket?.close();
        }
      }
    }
    const later = (transport: Transport) => turns.filter((t) => t.transport === transport && t.suffix !== undefined);
    const [http, ws] = [later("http"), later("websocket")];
    const med = (list: LoopTurn[], pick: (t: LoopTurn) => number) => median(list.map(pick));
    const bytes = { http: med(http, (t) => t.result.bytesSent), ws: med(ws, (t) => t.result.bytesSent) };
    const overheadOf = (t: LoopTurn) => t.result.ms - t.workerMs;
    const overhead = { http: med(http, overheadOf), ws: med(ws, overheadOf) };
    const total = { http: med(http, (t) => t.result.ms), ws: med(ws, (t) => t.result.ms) };
    const route = med(http, (t) => t.result.serverTiming?.route ?? Number.NaN);
    const n = `n=${http.length}+${ws.length}`;
    const row = (measure: string, value: string, spread = n): SummaryRow => ({
      workload: "responses ws vs http",
      measure,
      value,
      spread,
    });
    const summary = [
      row("bytes sent per continued turn, HTTP (median)", kb(bytes.http), `n=${http.length}`),
      row("bytes sent per continued turn, WebSocket (median)", kb(bytes.ws), `n=${ws.length}`),
      row("bytes sent per continued turn, HTTP − WebSocket", `${fmt(bytes.http - bytes.ws, 0)} B`),
      row("client-observed overhead per continued turn, HTTP (median)", `${fmt(overhead.http)} ms`, `n=${http.length}`),
      row(
        "client-observed overhead per continued turn, WebSocket (median)",
        `${fmt(overhead.ws)} ms`,
        `n=${ws.length}`,
      ),
      row("client-observed overhead per continued turn, HTTP − WebSocket", `${fmt(overhead.http - overhead.ws)} ms`),
      row(
        "edge route step per continued HTTP turn (server-timing route, median)",
        `${fmt(route)} ms`,
        `n=${http.length}`,
      ),
    ];
    const violations = [...http, ...ws]
      .filter((t) => t.prefilled !== t.suffix)
      .map((t) => `${t.transport} run ${t.run} turn ${t.turn}: prefilled ${t.prefilled} but the suffix is ${t.suffix}`);
    const section = [
      "## Responses agent loop: WebSocket vs HTTP (same run)",
      "",
      `Same ${setup.prefixTokens}-token instructions + ${tools.length} function tools as the agent loop; \`tool_choice: required\`,`,
      "stored responses (`store` default). Each transport runs its own loop of the same shape; later turns send",
      "`previous_response_id` + the `function_call_output` items (instructions and tools every turn, as the API requires).",
      "*bytes* = what the client sent for the turn (HTTP: request line + headers + body; WebSocket: the masked",
      "frame). *first item* / *turn* = client-observed ms to `response.output_item.added` / `response.completed`.",
      "*worker ms* = the worker's own time for the turn (its `turn finished` total_ms); *overhead* = turn ms − worker ms:",
      "everything the client waited for besides the worker (edge, transport, the stored record). *route* = the edge's",
      "`server-timing` route step (HTTP only; a socket turn has no headers).",
      "",
      "| transport | run | turn | prompt | prefilled | suffix | bytes sent | first item ms | turn ms | worker ms | overhead ms | route ms |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...turns.map(
        (t) =>
          `| ${t.transport} | ${t.run} | ${t.turn} | ${t.result.inputTokens} | ${t.prefilled} | ${t.suffix ?? "—"} | ${t.result.bytesSent} | ${fmt(t.result.firstItemMs, 0)} | ${fmt(t.result.ms, 0)} | ${fmt(t.workerMs, 0)} | ${fmt(overheadOf(t))} | ${t.result.serverTiming?.route ?? "—"} |`,
      ),
      "",
      `Medians over continued turns: bytes ${bytes.http} (HTTP) vs ${bytes.ws} (WebSocket); turn ${fmt(total.http)} vs ${fmt(total.ws)} ms; overhead ${fmt(overhead.http)} vs ${fmt(overhead.ws)} ms.`,
      "",
    ].join("\n");
    return { summary, section, violations };
  },
};
