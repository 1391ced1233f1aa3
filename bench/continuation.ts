/**
 * Live continuation vs cold prefill of the same prompt, through the whole stack.
 * Turn 1 (forced tool call) makes the session's live state; turn 2 returns the tool result and is
 * timed (max_tokens 1: prefill + first token). The same turn-2 request on a fresh session is the
 * cold comparator. Both are measured in the same run, alternating, on the same worker.
 */
import { countTokens, streamTurn } from "./edge-client.ts";
import { median, spread } from "./stats.ts";

const WORDS = "agent tool result session worker prefix token cache stream model prompt frontier edge route state".split(
  " ",
);

/** Deterministic filler text of about `words` words. */
function filler(words: number): string {
  let seed = 7;
  const out: string[] = [];
  for (let i = 0; i < words; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out.push(WORDS[seed % WORDS.length] ?? "agent");
    if (i % 17 === 16) out.push(".\n");
  }
  return out.join(" ");
}

const TOOL = {
  name: "run_check",
  description: "Run a named check",
  input_schema: { type: "object", properties: { name: { type: "string", maxLength: 12 } }, required: ["name"] },
};

async function systemForTokens(edgeUrl: string, target: number): Promise<string> {
  const probeWords = 400;
  const base = await countTokens(edgeUrl, { model: "m", tools: [TOOL], messages: [{ role: "user", content: "hi" }] });
  const probe = await countTokens(edgeUrl, {
    model: "m",
    system: filler(probeWords),
    tools: [TOOL],
    messages: [{ role: "user", content: "hi" }],
  });
  const perWord = (probe - base) / probeWords;
  return filler(Math.max(10, Math.round((target - base) / perWord)));
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

export async function benchContinuation(edgeUrl: string, targetTokens: number, reps: number): Promise<ContinuationRow> {
  const system = await systemForTokens(edgeUrl, targetTokens);
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
    const user = { role: "user", content: `Run the check number ${rep}.` };
    const first = await streamTurn(
      edgeUrl,
      { model: "m", max_tokens: 120, system, tools: [TOOL], tool_choice: { type: "any" }, messages: [user] },
      hint,
    );
    if (first.toolUses.length === 0) throw new Error("turn 1 made no tool call");
    const second = {
      model: "m",
      max_tokens: 1,
      system,
      tools: [TOOL],
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
    const cold = await streamTurn(edgeUrl, withForeignIds(second, rep), crypto.randomUUID());
    row.liveMs.push(live.ms);
    row.coldMs.push(cold.ms);
    row.promptTokens = live.inputTokens + live.cachedTokens;
    row.coldPromptTokens = cold.inputTokens + cold.cachedTokens;
    row.suffixTokens = live.inputTokens;
    row.decisions.push(`live: ${live.cache} | cold: ${cold.cache}`);
    if (!live.cache.includes("decision=live-tool-ids"))
      throw new Error(`expected a live continuation, got ${live.cache}`);
    if (!cold.cache.includes("decision=cold")) throw new Error(`expected a cold prefill, got ${cold.cache}`);
  }
  return row;
}

function withForeignIds<T>(request: T, rep: number): T {
  const json = JSON.stringify(request).replace(/toolu_[A-Za-z0-9_-]+/g, (id) => `toolu_cold${rep}${id.slice(-8)}`);
  return JSON.parse(json) as T;
}

export function continuationTable(rows: readonly ContinuationRow[]): string {
  const lines = [
    "| prompt tokens (live / cold) | prefilled on continuation | continuation TTFT ms (median, spread) | cold TTFT ms (median, spread) | cold / continuation |",
    "|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const live = median(r.liveMs);
    const cold = median(r.coldMs);
    lines.push(
      `| ${r.promptTokens} / ${r.coldPromptTokens} | ${r.suffixTokens} | ${live.toFixed(0)} (${spread(r.liveMs)}) | ${cold.toFixed(0)} (${spread(r.coldMs)}) | **${(cold / live).toFixed(1)}x** |`,
    );
  }
  return lines.join("\n");
}
