/**
 * Live continuation vs cold prefill of the same prompt, through the whole stack.
 * Turn 1 (forced tool call) makes the session's live state; turn 2 returns the tool result and is
 * timed (max_tokens 1: prefill + first token). The same turn-2 request on a fresh session is the
 * cold comparator. Both are measured in the same run, alternating, on the same worker.
 */

import { svgLineChart } from "../chart.ts";
import { countTokens, streamTurn } from "../clients/edge-client.ts";
import { fmt, median, ratioSpread, spread } from "../stats.ts";
import { filler } from "../text.ts";
import type { Workload } from "../workload.ts";
import type { AgentLoopShared } from "./agent-loop.ts";

const TOOL = {
  name: "run_check",
  description: "Run a named check",
  input_schema: { type: "object", properties: { name: { type: "string", maxLength: 12 } }, required: ["name"] },
};

interface PromptShape {
  system: string;
  tools: object[];
  /** Filler words appended to the user turn (0: a one-line task). */
  userWords: number;
}

/** A system prompt of about `target` tokens (with the one small tool), or — when an earlier
 * workload already made a long system + tools prefix shorter than `target` — that prefix plus a long
 * user turn, so turn 1 starts from the prefix's anchor checkpoint instead of a cold prefill. */
async function promptForTokens(
  edgeUrl: string,
  target: number,
  prefix: { system: string; tools: object[]; prefixTokens: number } | undefined,
): Promise<PromptShape> {
  const probeWords = 400;
  const count = (shape: PromptShape) =>
    countTokens(edgeUrl, {
      model: "m",
      system: shape.system,
      tools: shape.tools,
      messages: [{ role: "user", content: userText(0, shape.userWords) }],
    });
  if (prefix && prefix.prefixTokens + 1000 <= target) {
    const base = await count({ system: prefix.system, tools: prefix.tools, userWords: 0 });
    const probe = await count({ system: prefix.system, tools: prefix.tools, userWords: probeWords });
    const perWord = (probe - base) / probeWords;
    return { system: prefix.system, tools: prefix.tools, userWords: Math.round((target - base) / perWord) };
  }
  const base = await count({ system: "", tools: [TOOL], userWords: 0 });
  const probe = await count({ system: filler(probeWords), tools: [TOOL], userWords: 0 });
  const perWord = (probe - base) / probeWords;
  return { system: filler(Math.max(10, Math.round((target - base) / perWord))), tools: [TOOL], userWords: 0 };
}

function userText(rep: number, words: number): string {
  return words === 0 ? `Run the check number ${rep}.` : `Run the check number ${rep}. Context:\n${filler(words, 11)}`;
}

export interface ContinuationRow {
  targetTokens: number;
  promptTokens: number;
  coldPromptTokens: number;
  suffixTokens: number;
  liveMs: number[];
  coldMs: number[];
  decisions: string[];
}

export async function benchContinuation(
  edgeUrl: string,
  targetTokens: number,
  reps: number,
  prefix?: { system: string; tools: object[]; prefixTokens: number },
): Promise<ContinuationRow> {
  const shape = await promptForTokens(edgeUrl, targetTokens, prefix);
  const { system, tools } = shape;
  const row: ContinuationRow = {
    targetTokens,
    promptTokens: 0,
    coldPromptTokens: 0,
    suffixTokens: 0,
    liveMs: [],
    coldMs: [],
    decisions: [],
  };
  for (let rep = 0; rep < reps; rep++) {
    const hint = crypto.randomUUID();
    const user = { role: "user", content: userText(rep, shape.userWords) };
    const first = await streamTurn(
      edgeUrl,
      { model: "m", max_tokens: 400, system, tools, tool_choice: { type: "any" }, messages: [user] },
      hint,
    );
    if (first.toolUses.length === 0) throw new Error("turn 1 made no tool call");
    const second = {
      model: "m",
      max_tokens: 1,
      system,
      tools,
      messages: [
        user,
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: first.toolUses.map((t) => ({ type: "tool_result", tool_use_id: t.id, content: "ok: 0 failures" })),
        },
      ],
    };
    const live = await streamTurn(edgeUrl, second, hint);
    // The cold comparator: the same conversation on a fresh session. Its tool IDs are replaced by
    // IDs Frontier never minted (IDs are not part of the rendered prompt), so the edge cannot
    // route it to the live session and the worker must prefill it all.
    // Its system prompt also starts with a line of its own, so no checkpoint (e.g. the prefix
    // anchor turn 1 saved) is a prefix of it: a true cold prefill of the same number of tokens.
    const cold = await streamTurn(edgeUrl, coldVariant(second, rep), crypto.randomUUID());
    row.liveMs.push(live.ms);
    row.coldMs.push(cold.ms);
    row.promptTokens = live.inputTokens + live.cachedTokens;
    row.coldPromptTokens = cold.inputTokens + cold.cachedTokens;
    row.suffixTokens = live.inputTokens;
    row.decisions.push(`live: ${live.cache} | cold: ${cold.cache}`);
    // Judged by usage (the x-frontier-cache header says the same, when the decision came in time for it).
    const turn1 = first.inputTokens + first.cachedTokens + first.outputTokens;
    if (live.cachedTokens !== turn1) {
      throw new Error(
        `expected a live continuation from ${turn1} tokens, got cached=${live.cachedTokens} (${live.cache})`,
      );
    }
    if (cold.cachedTokens !== 0)
      throw new Error(`expected a cold prefill, got cached=${cold.cachedTokens} (${cold.cache})`);
  }
  return row;
}

function coldVariant<T extends { system: string }>(request: T, rep: number): T {
  const json = JSON.stringify(request).replace(/toolu_[A-Za-z0-9_-]+/g, (id) => `toolu_cold${rep}${id.slice(-8)}`);
  const cold = JSON.parse(json) as T;
  const salt = `cold ${rep} ${Date.now() % 100000}`;
  return { ...cold, system: `${salt}${cold.system.slice(salt.length)}` };
}

export function continuationTable(rows: readonly ContinuationRow[]): string {
  const lines = [
    "| prompt tokens (live / cold) | prefilled on continuation | continuation TTFT ms (median, spread) | cold TTFT ms (median, spread) | cold / continuation (median; per-run spread) |",
    "|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const live = median(r.liveMs);
    const cold = median(r.coldMs);
    lines.push(
      `| ${r.promptTokens} / ${r.coldPromptTokens} | ${r.suffixTokens} | ${live.toFixed(0)} (${spread(r.liveMs)}) | ${cold.toFixed(0)} (${spread(r.coldMs)}) | **${(cold / live).toFixed(1)}x** (${ratioSpread(perRep(r)).spread}) |`,
    );
  }
  return lines.join("\n");
}

/** Cold / continuation of each run (the two were measured back to back). */
function perRep(r: ContinuationRow): number[] {
  return r.coldMs.map((cold, i) => cold / (r.liveMs[i] ?? Number.NaN));
}

export function ttftChart(rows: readonly ContinuationRow[]): string {
  return svgLineChart({
    title: "TTFT vs context length: live continuation vs cold prefill",
    xLabel: "prompt tokens",
    yLabel: "TTFT (log scale, median)",
    series: [
      { name: "cold prefill", color: "#d1495b", points: rows.map((r) => [r.coldPromptTokens, median(r.coldMs)]) },
      { name: "live continuation", color: "#00798c", points: rows.map((r) => [r.promptTokens, median(r.liveMs)]) },
    ],
  });
}

export const continuationWorkload: Workload = {
  name: "continuation",
  needsStack: true,
  async run({ options, stack, earlier, progress }) {
    if (!stack) throw new Error("continuation needs the stack");
    const prefix = (earlier.get("agent-loop") as AgentLoopShared | undefined)?.setup;
    const rows: ContinuationRow[] = [];
    for (const tokens of options.contexts) {
      progress(`continuation vs cold at ~${tokens} tokens (${options.reps} reps)`);
      rows.push(await benchContinuation(stack.edgeUrl, tokens, options.reps, prefix));
    }
    const violations = rows
      .filter((r) => r.suffixTokens >= r.promptTokens / 2)
      .map((r) => `continuation at ${r.promptTokens} tokens prefilled ${r.suffixTokens} tokens`);
    return {
      summary: rows.map((r) => ({
        workload: "continuation vs cold",
        measure: `cold / continuation TTFT at ${r.promptTokens} tokens`,
        ...ratioSpread(perRep(r), 1),
      })),
      section: [
        `## Live continuation vs cold prefill (TTFT = prefill + first token, through the edge; context ${options.contextSize}, ${options.sequences} sequences)`,
        "",
        "Turn 2 of a tool loop (`max_tokens: 1`), continuing the live KV by tool-result IDs, against the same",
        "request on a fresh session whose system prompt starts with a line of its own (so no checkpoint applies).",
        prefix
          ? `Prompts of at least ${prefix.prefixTokens + 1000} tokens reuse the agent loop's system + tools and carry the rest in the user turn (so their turn 1 starts from that prefix's checkpoint); smaller ones are a system prompt and one tool.`
          : "Each prompt is a system prompt and one small tool.",
        "",
        continuationTable(rows),
        "",
        `![TTFT vs context length](ttft-vs-context.svg)`,
        "",
        `Prefill rate seen by the cold runs: ${rows.map((r) => `${fmt(r.coldPromptTokens / (median(r.coldMs) / 1000), 0)} tok/s at ${r.coldPromptTokens}`).join(", ")}.`,
        "",
      ].join("\n"),
      files: { "ttft-vs-context.svg": ttftChart(rows) },
      violations,
    };
  },
};
