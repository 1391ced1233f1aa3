/** The fleet workload's figures: per-agent rows, the side-by-side table, summary rows and checks. */
import { percentile } from "../../stats.ts";
import type { SummaryRow } from "../../workload.ts";
import type { FleetSizes } from "./fleet-agents.ts";

export interface FleetTurn {
  agent: string;
  tenant: number;
  index: number;
  /** Frontier: the `x-frontier-cache` decision; llama-server: "cache" when it reused anything. */
  decision: string;
  prompt: number;
  cached: number;
  prefilled: number;
  ttftMs: number;
  /** Frontier, agents after a tenant's first: tokens of the message no earlier agent shares (count_tokens). */
  unique: number | undefined;
}

/**
 * Tokens a follower may prefill beyond its unique suffix: the turn's closing framing after the user's
 * text (end of the user turn, the assistant header: 23 tokens with the chatml family and tools) and a
 * token at the cut where tokenization may merge across it.
 */
export const FRAMING_SLACK = 32;

const sum = (turns: readonly FleetTurn[], key: "prompt" | "cached" | "prefilled") =>
  turns.reduce((n, t) => n + t[key], 0);
const followers = (turns: readonly FleetTurn[]) => turns.filter((t) => t.index > 0);
const ms = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? "–" : `${Math.round(v)}`);

function ttft(turns: readonly FleetTurn[]): { p50: number | undefined; p90: number | undefined } {
  const values = turns.map((t) => t.ttftMs);
  return { p50: percentile(values, 50), p90: percentile(values, 90) };
}

export function fleetViolations(frontier: readonly FleetTurn[]): string[] {
  const out: string[] = [];
  for (const t of frontier) {
    if (t.index === 0 && t.tenant > 0 && t.decision !== "public-prefix") {
      out.push(`fleet: ${t.agent} (another tenant's first agent) did not restore the public prefix (${t.decision})`);
    }
    if (t.index === 0) continue;
    if (t.decision !== "shared-prefix") out.push(`fleet: ${t.agent} did not copy a shared prefix (${t.decision})`);
    if (t.unique === undefined || t.prefilled > t.unique + FRAMING_SLACK) {
      out.push(`fleet: ${t.agent} prefilled ${t.prefilled} tokens; its non-shared suffix is ${t.unique ?? "?"}`);
    }
  }
  return out;
}

function totals(name: string, turns: readonly FleetTurn[]): string {
  const prompt = sum(turns, "prompt");
  const reuse = prompt > 0 ? `${((100 * sum(turns, "cached")) / prompt).toFixed(1)}%` : "–";
  const all = ttft(turns);
  const follow = ttft(followers(turns));
  return `| ${name} | ${prompt} | ${sum(turns, "prefilled")} | ${reuse} | ${sum(followers(turns), "prefilled")} | ${ms(all.p50)} / ${ms(all.p90)} | ${ms(follow.p50)} / ${ms(follow.p90)} |`;
}

export function fleetSection(
  frontier: readonly FleetTurn[],
  peer: readonly FleetTurn[],
  setup: { sizes: FleetSizes; publicChars: number; contextSize: number },
): string {
  const byAgent = new Map(peer.map((t) => [t.agent, t]));
  const lines = [
    "## Agent fleet: shared prefixes across conversations and tenants",
    "",
    `2 tenants × ${setup.sizes.agents} agents of one client version (system prompt ~${setup.sizes.systemChars} characters + 5 tools, the same for both tenants; registered as a public prefix of ${setup.publicChars} rendered characters), each tenant's agents sharing a ~${setup.sizes.contextChars}-character project-context first message that differs only in its last line. Per tenant the first agent starts alone, then the others together. Frontier: one worker, ${setup.sizes.agents} sequences × ${setup.contextSize} cells; llama-server: \`--parallel ${setup.sizes.agents}\`, the same cells per slot, its prompt cache as shipped.`,
    "",
    "| system | prompt tokens | prefilled | reuse | prefilled by the followers | TTFT p50 / p90 ms, all | TTFT p50 / p90 ms, followers |",
    "|---|---|---|---|---|---|---|",
    totals("Frontier", frontier),
    ...(peer.length > 0 ? [totals("llama-server", peer)] : []),
    "",
    "| agent | Frontier decision | prompt | cached | prefilled | non-shared suffix | TTFT ms | llama-server cached / prefilled | TTFT ms |",
    "|---|---|---|---|---|---|---|---|---|",
    ...frontier.map((t) => {
      const p = byAgent.get(t.agent);
      return `| ${t.agent} | ${t.decision} | ${t.prompt} | ${t.cached} | ${t.prefilled} | ${t.unique ?? "–"} | ${ms(t.ttftMs)} | ${p ? `${p.cached} / ${p.prefilled}` : "–"} | ${ms(p?.ttftMs)} |`;
    }),
    "",
    `"Non-shared suffix": tokens of the agent's first message after the longest prefix it shares with an earlier agent of its tenant (count_tokens of the request less that of the request cut there); a follower passes when it prefills at most that + ${FRAMING_SLACK} (the turn's closing framing). llama-server's prompt is the ChatML rendering of the same request (tools as text), so its token counts differ slightly.`,
  ];
  return lines.join("\n");
}

export function fleetSummary(frontier: readonly FleetTurn[], peer: readonly FleetTurn[]): SummaryRow[] {
  const n = frontier.length;
  const rows: SummaryRow[] = [
    {
      workload: "fleet",
      measure: `agent fleet (2 tenants × ${n / 2} agents): tokens prefilled, Frontier vs llama-server`,
      value: `${sum(frontier, "prefilled")} vs ${peer.length > 0 ? sum(peer, "prefilled") : "–"}`,
      spread: `prompt ${sum(frontier, "prompt")} vs ${peer.length > 0 ? sum(peer, "prompt") : "–"}; followers ${sum(followers(frontier), "prefilled")} vs ${peer.length > 0 ? sum(followers(peer), "prefilled") : "–"}`,
    },
  ];
  const f = ttft(followers(frontier));
  const p = ttft(followers(peer));
  rows.push({
    workload: "fleet",
    measure: `agent fleet (2 tenants × ${n / 2} agents): followers' TTFT p50 / p90, Frontier vs llama-server`,
    value: `${ms(f.p50)} / ${ms(f.p90)} ms vs ${ms(p.p50)} / ${ms(p.p90)} ms`,
    spread: `one run; decisions ${frontier.map((t) => t.decision).join(", ")}`,
  });
  return rows;
}
