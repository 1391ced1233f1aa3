/** The load workload's report section, its summary rows and its correctness failures. */
import { fmt } from "../../stats.ts";
import type { SummaryRow } from "../../workload.ts";
import type { FrontierFigures, LatencyFigures, PeerFigures, PoolFigures } from "./load-figures.ts";
import { STALL_MS } from "./load-figures.ts";
import { describeSettings, type LoadSettings } from "./load-settings.ts";
import type { PoolSample } from "./pool-sampler.ts";

export interface LoadReport {
  settings: LoadSettings;
  modelName: string;
  frontier: FrontierFigures;
  pool: PoolFigures;
  samplerFailures: Map<string, number>;
  /** RSS (bytes) per worker id: after the stack started, then after each wave. */
  rss: Map<string, number[]>;
  restarts: Map<string, number>;
  /** The llama-server side, or why it did not run. */
  peer: PeerFigures | string;
  chartFile: string;
  seconds: number;
  /** The host's 1-minute load average at the start and at the end, and its cores. */
  host: { loadStart: number; loadEnd: number; cores: number };
}

const pct = (part: number, whole: number) => (whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)}%`);
const mib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(0)} MiB` : "gone");
const ms = (v: number) => (Number.isFinite(v) ? `${fmt(v, 0)} ms` : "n/a");

/** Largest RSS growth from the first wave's end to the last wave's, over the workers. */
export function rssGrowth(rss: Map<string, number[]>): number {
  const growth = [...rss.values()].map((series) => {
    const first = series[1];
    const last = series[series.length - 1];
    return first === undefined || last === undefined || series.length < 3 ? Number.NaN : (last - first) / first;
  });
  return Math.max(...growth.filter(Number.isFinite), Number.NEGATIVE_INFINITY);
}

/**
 * Largest RSS growth over the last wave alone (the reading before it to the last), over the workers:
 * whether RSS still climbs once the bounded fills of the first waves are done (a plateau reads ~0;
 * with 3 waves it is wave 2 → 3, so `--load waves=8` shows the plateau better).
 */
export function lastWaveRssGrowth(rss: Map<string, number[]>): number {
  const growth = [...rss.values()].map((series) => {
    const before = series[series.length - 2];
    const last = series[series.length - 1];
    return before === undefined || last === undefined || series.length < 3 ? Number.NaN : (last - before) / before;
  });
  return Math.max(...growth.filter(Number.isFinite), Number.NEGATIVE_INFINITY);
}

/** The run's shape, in every summary row (so runs of another shape get rows of their own). */
function label(s: LoadSettings): string {
  const extras = [
    s.tenants === 4 ? "" : `${s.tenants} tenant${s.tenants > 1 ? "s" : ""}`,
    s.protocols.length === 4 ? "" : s.protocols.join("+"),
    s.contend > 0 ? `${s.contend} busy loops` : "",
  ].filter((e) => e !== "");
  return `${s.agents} agents (${s.waves} waves × ${s.turns} turns, ${s.workers} workers × ${s.sequences} sequences${extras.map((e) => `, ${e}`).join("")})`;
}

export function loadSummary(r: LoadReport): SummaryRow[] {
  const f = r.frontier;
  const growth = rssGrowth(r.rss);
  const lastWave = lastWaveRssGrowth(r.rss);
  const peer = typeof r.peer === "string" ? undefined : r.peer;
  const inStream = (n: number) => f.refusedInStream.get(n) ?? 0;
  const statuses = `429 × ${f.statuses.get(429) ?? 0} (+${inStream(429)} in stream), 529 × ${f.statuses.get(529) ?? 0} (+${inStream(529)} in stream)`;
  return [
    {
      workload: "load",
      measure: `${label(r.settings)}: turns failed (goal 0)`,
      value: `${f.failed} of ${f.failed + f.completed}`,
      spread: `${[...f.failures].map(([k, v]) => `${k} × ${v.count}`).join(", ") || "none"}; ${statuses}; longest stall ${stallText(r.pool)}`,
    },
    {
      workload: "load",
      measure: `${label(r.settings)}: turns 2+ continued suffix-only (goal ≥ 99%)`,
      value: pct(f.later.suffixOnly, f.later.completed),
      spread: `${f.later.suffixOnly}/${f.later.completed}; re-sent after an abort: ${f.later.resentSuffixOnly}/${f.later.resent}`,
    },
    {
      workload: "load",
      measure: `${label(r.settings)}: p50 / p99 TTFT, Frontier vs llama-server`,
      value: `${ms(f.all.ttftP50)} / ${ms(f.all.ttftP99)}${peer ? ` vs ${ms(peer.all.ttftP50)} / ${ms(peer.all.ttftP99)}` : ""}`,
      spread: `turn p50 / p99 ${ms(f.all.turnP50)} / ${ms(f.all.turnP99)}${peer ? ` vs ${ms(peer.all.turnP50)} / ${ms(peer.all.turnP99)}` : ` (llama-server: ${r.peer})`}`,
    },
    {
      workload: "load",
      measure: `${label(r.settings)}: worker RSS growth, first to last wave (goal < 10%)`,
      value: Number.isFinite(growth) ? `${(growth * 100).toFixed(1)}%` : "n/a",
      spread: [...r.rss].map(([id, series]) => `${id}: ${series.map(mib).join(" → ")}`).join("; "),
    },
    {
      workload: "load",
      measure: `${label(r.settings)}: worker RSS growth over the last wave (plateau)`,
      value: Number.isFinite(lastWave) ? `${(lastWave * 100).toFixed(1)}%` : "n/a",
      spread:
        "the bounded fills (V8's young generation, malloc arenas) land in the first waves; see docs/operations/worker-memory.md",
    },
  ];
}

export function loadViolations(r: LoadReport): string[] {
  const f = r.frontier;
  if (f.failed === 0) return [];
  const reasons = [...f.failures].map(([k, v]) => `${k} × ${v.count}`).join(", ");
  return [`${f.failed} of ${f.failed + f.completed} turns failed (${reasons})`];
}

function stallText(pool: PoolFigures): string {
  if (pool.stalls.length === 0) return `none ≥ ${STALL_MS / 1000} s`;
  const longest = Math.max(...pool.stalls.map(([a, b]) => b - a));
  return `${(longest / 1000).toFixed(0)} s (${pool.stalls.length} stall${pool.stalls.length > 1 ? "s" : ""})`;
}

function poolView(sample: PoolSample): string {
  return sample.workers
    .map(
      (w) =>
        `${w.id} sequencesFree ${w.sequencesFree}/${w.sequencesTotal}, queueDepth ${w.queueDepth}, activeRequests ${w.activeRequests}, residentSessions ${w.residentSessions}`,
    )
    .join("; ");
}

function latencyRow(name: string, l: LatencyFigures): string {
  return `| ${name} | ${l.n} | ${ms(l.ttftP50)} | ${ms(l.ttftP99)} | ${ms(l.turnP50)} | ${ms(l.turnP99)} |`;
}

function goals(r: LoadReport): string[] {
  const f = r.frontier;
  const growth = rssGrowth(r.rss);
  const lastWave = lastWaveRssGrowth(r.rss);
  const peer = typeof r.peer === "string" ? undefined : r.peer;
  const yes = (ok: boolean) => (ok ? "met" : "**not met**");
  return [
    "| goal | result | |",
    "|---|---|---|",
    `| 0 failed turns | ${f.failed} failed of ${f.failed + f.completed} | ${yes(f.failed === 0)} |`,
    `| ≥ 99% of turns 2+ suffix-only | ${pct(f.later.suffixOnly, f.later.completed)} | ${yes(f.later.completed > 0 && f.later.suffixOnly >= 0.99 * f.later.completed)} |`,
    `| worker RSS flat across waves (< 10% growth) | ${Number.isFinite(growth) ? `${(growth * 100).toFixed(1)}%` : "n/a (needs 2+ waves)"} | ${Number.isFinite(growth) ? yes(growth < 0.1) : "n/a"} |`,
    `| (worker RSS growth over the last wave alone) | ${Number.isFinite(lastWave) ? `${(lastWave * 100).toFixed(1)}%` : "n/a (needs 2+ waves)"} | |`,
    `| p99 TTFT bounded by queueing, next to llama-server's | ${ms(f.all.ttftP99)}${peer ? ` vs ${ms(peer.all.ttftP99)}` : ""} | ${peer ? `${fmt(f.all.ttftP99 / peer.all.ttftP99, 2)}x llama-server's` : "no llama-server"} |`,
  ];
}

export function loadSection(r: LoadReport): string {
  const f = r.frontier;
  const statusLine = [...f.statuses]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s} × ${n}`)
    .join(", ");
  const view = r.pool.stalledView;
  const peer = typeof r.peer === "string" ? undefined : r.peer;
  return [
    `## Load: ${label(r.settings)}`,
    "",
    `${describeSettings(r.settings)}; model ${r.modelName}; ${fmt(r.seconds, 0)} s in all; host load average ${fmt(r.host.loadStart)} at the start, ${fmt(r.host.loadEnd)} at the end, on ${r.host.cores} cores.`,
    "Clients: Anthropic SDK (Messages), openai SDK (Responses over HTTP, Responses over WebSocket, Chat Completions),",
    "one protocol per agent in turn; every turn a forced tool call; the SDKs retry 429/529/5xx honouring retry-after.",
    "",
    ...goals(r),
    "",
    `Turns: ${f.completed} completed, ${f.failed} failed, ${f.notSent} not sent after a failure, of ${f.planned} planned; ${f.endedWithoutCall} conversations ended early (a turn cut by max_tokens before its call closed); ${f.resent} turns aborted mid-stream by their client and re-sent; ${f.retriedTurns} turns needed a retry.`,
    "",
    ...(f.failures.size > 0
      ? [
          "| failure | turns | example |",
          "|---|---|---|",
          ...[...f.failures].map(
            ([k, v]) => `| ${k} | ${v.count} | ${v.example.replace(/\|/g, "\\|").slice(0, 240)} |`,
          ),
          "",
        ]
      : []),
    `Statuses seen (every HTTP request, retries included; a socket turn has no status, only its refusals count, as the \`status\` of their error events): ${statusLine || "none"}. Refusals inside a stream already started (an \`overloaded_error\` / \`server_overloaded\` or rate-limit error event after HTTP 200), retried by the client as Claude Code and Codex do: ${[...f.refusedInStream].map(([s, n]) => `${s} × ${n}`).join(", ") || "none"}.`,
    "",
    `Turns 2+ suffix-only (cached ≥ the previous turn's prompt + output − 1): ${f.later.suffixOnly} of ${f.later.completed} (${pct(f.later.suffixOnly, f.later.completed)}); turns re-sent after an abort: ${f.later.resentSuffixOnly} of ${f.later.resent}. Decisions of turns 2+ (\`x-frontier-cache\`, on the HTTP turns whose worker decided before the edge sent the headers): ${[...f.laterDecisions].map(([d, n]) => `${d} × ${n}`).join(", ") || "none"}. Tokens prefilled on turns 2+: ${f.prefilledLater}${peer ? ` (llama-server: ${peer.prefilledLater}, reused ${peer.cachedLater})` : ""}.`,
    "",
    "| side | turns | p50 TTFT | p99 TTFT | p50 turn | p99 turn |",
    "|---|---|---|---|---|---|",
    latencyRow("Frontier, all turns", f.all),
    latencyRow("Frontier, turns 2+", f.laterLatency),
    ...[...f.byProtocol].map(([p, v]) => latencyRow(`Frontier, ${p} (${v.failed} failed)`, v.lat)),
    ...(peer
      ? [
          latencyRow(`llama-server, all turns (${peer.failed} failed)`, peer.all),
          latencyRow("llama-server, turns 2+", peer.laterLatency),
        ]
      : []),
    "",
    peer
      ? `llama-server: ${r.settings.workers} servers × \`--parallel ${r.settings.sequences}\` (1 thread each), the same conversations (bench/workloads/load/peer-replay.ts); ${peer.completed} completed, ${peer.failed} failed${peer.failures.size > 0 ? ` (${[...peer.failures].map(([k, n]) => `${k} × ${n}`).join(", ")})` : ""}.`
      : `llama-server: ${r.peer}.`,
    "",
    `Pool (GET /admin/workers every 250 ms, ${r.pool.stalls.length > 0 ? "" : "no "}stalls): ${[...r.pool.maxQueue].map(([id, q]) => `${id} queue max ${q}, sequences busy mean ${fmt(r.pool.meanBusy.get(id) ?? 0, 2)}`).join("; ")}; longest stall ${stallText(r.pool)}${r.samplerFailures.size > 0 ? `; failed reads: ${[...r.samplerFailures].map(([k, n]) => `${k} × ${n}`).join(", ")}` : ""}.`,
    "",
    `Requests queued while a sequence was free (heartbeat view): ${[...r.pool.idleQueued].map(([id, v]) => `${id} ${fmt(v.totalMs / 1000)} s in all, longest ${fmt(v.longestMs / 1000)} s`).join("; ")}.`,
    ...(view ? ["", `While stalled (t = ${fmt(view.atMs / 1000, 0)} s): ${poolView(view)}.`] : []),
    ...(r.pool.idleView
      ? [
          "",
          `In the longest run queued beside a free sequence (t = ${fmt(r.pool.idleView.atMs / 1000, 0)} s): ${poolView(r.pool.idleView)}.`,
        ]
      : []),
    "",
    `Worker RSS (after start, then after each wave): ${[...r.rss].map(([id, s]) => `${id} ${s.map(mib).join(" → ")}`).join("; ")}; restarts: ${[...r.restarts].map(([id, n]) => `${id} ${n}`).join(", ")}.`,
    "",
    `![Sequences busy and requests queued over time](${r.chartFile})`,
    "",
  ].join("\n");
}
