/** The trace replay's outputs: the JSON report, the markdown section, the ratio-table rows and the chart. */
import { fmt } from "../stats.ts";
import type { SummaryRow } from "../workload.ts";
import { traceChart } from "./chart.ts";
import type { PeerPromptMode } from "./chat-framing.ts";
import type { ReplayRun } from "./replay.ts";
import type { ScaledTrace } from "./scale.ts";
import { reuseOverTime, type SystemSummary } from "./summary.ts";

export interface ReplaySystem {
  /** JSON key: `frontier` (1 worker), `frontier_2_workers`, `llama_server`. */
  key: string;
  run: ReplayRun;
  summary: SystemSummary;
  /** Frontier's continuation-ladder decisions during the replay (from its worker metrics). */
  decisions: readonly (readonly [string, number])[];
}

export interface TraceContext {
  tracePath: string;
  fullRequests: number;
  /** The unscaled trace's infinite-cache ceiling (blocks only). */
  fullCeiling: number;
  scaled: ScaledTrace;
  contextSize: number;
  /** How llama-server was prompted: the same framed tokens as Frontier's worker prefills, or raw trace ids. */
  peerPrompt: PeerPromptMode;
  /** What the framing check found per Frontier run (framing-check.ts). */
  framingNotes: readonly string[];
}

export const CHART_FILE = "trace-replay.svg";
const COLORS = ["#1f77b4", "#2ca02c", "#d62728", "#9467bd"];

const pct = (f: number) => `${(100 * f).toFixed(1)}%`;

export function scalingLines({ scaled, fullRequests }: TraceContext): string[] {
  const { scaling } = scaled;
  const followUps = scaled.requests.filter((r) => r.parent !== undefined).length;
  return [
    `blocks of ${scaling.blockTokens} tokens for the trace's 512 (lengths ×${scaled.factor}: full blocks stay full, the cut last block and outputs shrink by the same factor, at least 1 token)`,
    `${scaled.requests.length} of ${fullRequests} requests: ${scaled.conversations} whole conversations sampled at random (seed ${scaling.seed}), ${followUps} sent as next turns (${scaled.followUpsTooShort} follow-ups too short to hold their parent's output went as first turns; ${scaled.branches} branches)`,
    `arrivals compressed ${fmt(scaled.timeCompression)}x into ${scaling.spanSeconds} s; a next turn waits for the turn it continues`,
  ];
}

export function traceJson(context: TraceContext, systems: readonly ReplaySystem[]): Record<string, unknown> {
  const { scaled } = context;
  const out: Record<string, unknown> = {
    trace: {
      file: context.tracePath,
      requests: scaled.requests.length,
      trace_requests: context.fullRequests,
      conversations: scaled.conversations,
      next_turns: scaled.requests.filter((r) => r.parent !== undefined).length,
      ceiling_reuse: scaled.ceiling.blocks,
      ceiling_reuse_with_own_output: scaled.ceiling.withOwnOutput,
      full_trace_ceiling_reuse: context.fullCeiling,
      scaling: { ...scaled.scaling, factor: scaled.factor, time_compression: scaled.timeCompression },
      context_per_sequence: context.contextSize,
      llama_server_prompt: context.peerPrompt,
    },
  };
  for (const s of systems) out[s.key] = { ...s.summary, decisions: Object.fromEntries(s.decisions) };
  return out;
}

export function traceSummaryRows(context: TraceContext, systems: readonly ReplaySystem[]): SummaryRow[] {
  const { ceiling } = context.scaled;
  const rows: SummaryRow[] = systems.map(({ summary: s }) => ({
    workload: "trace replay",
    measure: `${s.target}: prefix reuse / ceiling with own output`,
    value: pct(s.reuse_vs_ceiling),
    spread: `reuse ${pct(s.reuse)} vs ceiling ${pct(ceiling.withOwnOutput)}; blocks only ${pct(s.reuse_blocks_only)} vs ${pct(ceiling.blocks)}; TTFT p90 ${fmt(s.ttft_ms.p90, 0)} ms`,
  }));
  const frontier = systems.find((s) => s.key === "frontier")?.summary;
  const peer = systems.find((s) => s.key === "llama_server")?.summary;
  if (frontier && peer) {
    rows.push(
      {
        workload: "trace replay",
        measure: "llama-server / Frontier (1 worker) p90 TTFT",
        value: `${fmt(peer.ttft_ms.p90 / frontier.ttft_ms.p90, 2)}x`,
        spread: `p90 ${fmt(peer.ttft_ms.p90, 0)} vs ${fmt(frontier.ttft_ms.p90, 0)} ms; p50 ${fmt(peer.ttft_ms.p50, 0)} vs ${fmt(frontier.ttft_ms.p50, 0)} ms`,
      },
      {
        workload: "trace replay",
        measure: "llama-server / Frontier (1 worker) tokens prefilled",
        value: `${fmt(peer.prefilled_tokens / frontier.prefilled_tokens, 2)}x`,
        spread: `${peer.prefilled_tokens} vs ${frontier.prefilled_tokens} tokens (n=${frontier.requests} requests)`,
      },
    );
  }
  return rows;
}

export function traceSection(context: TraceContext, systems: readonly ReplaySystem[]): string {
  const { scaled } = context;
  const head = [
    "| system | requests (failed) | reuse (ceiling) | reuse, blocks only (ceiling) | of ceiling | prompt / prefilled tokens | TTFT p50 / p90 / p99 ms | e2e p50 / p90 / p99 ms | output tok/s | in flight at send (mean / max) | queue ms (mean) |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  const rows = systems.map(({ summary: s }) =>
    [
      s.target,
      `${s.requests} (${s.failed})`,
      `${pct(s.reuse)} (${pct(scaled.ceiling.withOwnOutput)})`,
      `${pct(s.reuse_blocks_only)} (${pct(scaled.ceiling.blocks)})`,
      `${pct(s.reuse_vs_ceiling)} / ${pct(s.reuse_blocks_vs_ceiling)}`,
      `${s.prompt_tokens} / ${s.prefilled_tokens}`,
      `${fmt(s.ttft_ms.p50, 0)} / ${fmt(s.ttft_ms.p90, 0)} / ${fmt(s.ttft_ms.p99, 0)}`,
      `${fmt(s.e2e_ms.p50, 0)} / ${fmt(s.e2e_ms.p90, 0)} / ${fmt(s.e2e_ms.p99, 0)}`,
      fmt(s.output_tokens_per_s),
      `${fmt(s.in_flight_at_send.mean)} / ${s.in_flight_at_send.max}`,
      fmt(s.queue_ms.mean, 0),
    ].join(" | "),
  );
  const decisions = systems
    .filter((s) => s.decisions.length > 0)
    .map((s) => `- ${s.run.target} ladder decisions: ${s.decisions.map(([d, n]) => `${d} ${n}`).join(", ")}`);
  return [
    "## Trace replay: a production trace against Frontier and llama-server",
    "",
    `Trace: \`${context.tracePath}\` (${context.fullRequests} requests; infinite-cache ceiling of the whole trace ${pct(context.fullCeiling)} of input tokens). Scaling:`,
    "",
    ...scalingLines(context).map((l) => `- ${l}`),
    `- KV: ${context.contextSize} cells per sequence, 2 sequences per Frontier worker; llama-server \`--parallel 2 -c ${2 * context.contextSize}\``,
    "",
    ...head,
    ...rows.map((r) => `| ${r} |`),
    "",
    ...decisions,
    ...context.framingNotes.map((n) => `- framing check, ${n}`),
    "",
    "Reuse is cached / prompt tokens as each system counts them (a next turn's context holds its parent's own output). " +
      "\"Blocks only\" caps each request's cached tokens at what an infinite cache of the trace's blocks could reuse, over the trace's input tokens. " +
      "Ceilings are computed on the scaled sample. Frontier: Responses API through the edge, a next turn by `previous_response_id`, " +
      "prompts as text over a 1:1 token alphabet (checked: every turn's input_tokens is its tokens + the chat framing, above); queue ms from its workers' " +
      "`frontier:request_queue_time_seconds`. llama-server: `/completion` with token ids, `cache_prompt`, a next turn sending prompt + " +
      "generated tokens + the new tokens; queue ms = TTFT − its `timings.prompt_ms`. " +
      (context.peerPrompt === "framed"
        ? "Its prompts carry the chat framing Frontier's worker prefills around each turn (`--llama-server-prompt framed`: its chat format and tokenizer; checked against every Frontier turn's input_tokens), so both are fed the same token sequences. "
        : "Its prompts are the trace's token ids alone (`--llama-server-prompt raw`): Frontier's chat framing is not sent to it. ") +
      "Systems run one after the other on the same machine.",
    "",
    `![TTFT CDF and reuse over time](${CHART_FILE})`,
    "",
  ].join("\n");
}

export function traceFiles(scaled: ScaledTrace, systems: readonly ReplaySystem[]): Record<string, string> {
  const series = systems.map((s, i) => ({
    name: s.run.target,
    color: COLORS[i % COLORS.length] as string,
    ttftMs: s.run.requests.map((r) => r.ttftMs),
    reuse: reuseOverTime(s.run),
  }));
  return {
    [CHART_FILE]: traceChart(
      `Trace replay (${scaled.requests.length} requests, blocks of ${scaled.scaling.blockTokens})`,
      series,
      scaled.ceiling,
    ),
  };
}
