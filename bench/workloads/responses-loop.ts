/**
 * The agent loop again, through the OpenAI Responses API: each turn sends only
 * `previous_response_id` + the `function_call_output` items (in completion order), as Codex-style
 * and SDK agents do. Per turn: prompt tokens, prefilled, cached, the suffix, time to the first
 * output item. Then the same final prompt is sent as a cold request (full input, a fresh session,
 * a nonce in the instructions so no prefix checkpoint applies) for continuation vs cold.
 * Correctness check (not a timing assertion): from turn 2 on, prefilled must equal the suffix.
 */

import { type ResponsesTurnResult, streamResponse } from "../clients/responses-client.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import { filler, hash32 } from "../text.ts";
import type { Workload, WorkloadContext } from "../workload.ts";
import { buildAgentSetup } from "./agent-loop.ts";

interface LoopTurn {
  run: number;
  turn: number;
  calls: number;
  prompt: number;
  prefilled: number;
  cached: number;
  suffix: number | undefined;
  firstItemMs: number;
  decision: string;
}

const decisionOf = (r: ResponsesTurnResult) => /decision=([\w-]+)/.exec(r.cache)?.[1] ?? "?";

export const responsesLoopWorkload: Workload = {
  name: "responses-loop",
  needsStack: true,
  async run({ options, stack, progress }: WorkloadContext) {
    if (!stack) throw new Error("responses-loop needs the stack");
    const setup = await buildAgentSetup(stack.edgeUrl, options.agentPrefixTokens);
    const tools = setup.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.input_schema,
    }));
    const base = { model: "frontier-test", tools, tool_choice: "required", max_output_tokens: 400 };
    const turns: LoopTurn[] = [];
    const coldRatios: number[] = [];
    const coldRows: string[] = [];
    for (let run = 1; run <= options.reps; run++) {
      progress(`responses loop ${run}/${options.reps}: ${options.agentTurns} turns by previous_response_id`);
      const instructions = setup.system;
      const input: unknown[] = [{ role: "user", content: `run ${run}: fix the failing test, then run the suite.` }];
      // The same conversation with foreign call IDs, for the cold request at the end.
      const history: unknown[] = [...input];
      const foreign = (id: string) => `call_cold_${hash32(id).toString(16)}`;
      let previous: ResponsesTurnResult | undefined;
      let last: ResponsesTurnResult | undefined;
      for (let turn = 1; turn <= options.agentTurns; turn++) {
        const outputs = (previous?.calls ?? [])
          .map((call, i) => ({ call, ms: hash32(`${run}:${turn}:${i}`) % 1000 }))
          .sort((a, b) => a.ms - b.ms)
          .map(({ call }) => ({
            type: "function_call_output",
            call_id: call.call_id,
            output: filler(options.quick ? 20 : 120, hash32(call.call_id)),
          }));
        const turnInput = previous ? outputs : input;
        if (previous) {
          for (const call of previous.calls)
            history.push({ type: "function_call", ...call, call_id: foreign(call.call_id) });
          for (const output of outputs) history.push({ ...output, call_id: foreign(output.call_id) });
        }
        const result = await streamResponse(stack.edgeUrl, {
          ...base,
          instructions,
          input: turnInput,
          ...(previous ? { previous_response_id: previous.id } : {}),
        });
        turns.push({
          run,
          turn,
          calls: result.calls.length,
          prompt: result.inputTokens,
          prefilled: result.inputTokens - result.cachedTokens,
          cached: result.cachedTokens,
          suffix: previous ? result.inputTokens - (previous.inputTokens + previous.outputTokens) : undefined,
          firstItemMs: result.firstItemMs,
          decision: decisionOf(result),
        });
        if (turn === options.agentTurns) last = result;
        else previous = result;
        if (result.calls.length === 0) break;
      }
      // One cold prefill of the whole prompt is minutes on a CPU at 20k tokens: measured on run 1 only.
      if (!last || !previous || run > 1) continue;
      // Cold: the same conversation as full input in a new session (fresh IDs, nonce'd instructions).
      const cold = await streamResponse(stack.edgeUrl, {
        ...base,
        instructions: `[${crypto.randomUUID()}] ${instructions}`,
        input: history,
        store: false,
      });
      coldRatios.push(cold.firstItemMs / last.firstItemMs);
      coldRows.push(
        `| ${run} | ${last.inputTokens} | ${last.inputTokens - last.cachedTokens} | ${fmt(last.firstItemMs, 0)} (${decisionOf(last)}) | ${cold.inputTokens} | ${cold.inputTokens - cold.cachedTokens} | ${fmt(cold.firstItemMs, 0)} (${decisionOf(cold)}) | ${fmt(cold.firstItemMs / last.firstItemMs)}x |`,
      );
    }
    const later = turns.filter((t) => t.suffix !== undefined);
    const violations = later
      .filter((t) => t.prefilled !== t.suffix)
      .map((t) => `responses run ${t.run} turn ${t.turn}: prefilled ${t.prefilled} but the suffix is ${t.suffix}`);
    const summary = [
      {
        workload: "responses loop",
        measure: `prefilled / suffix, turns 2–${options.agentTurns} (previous_response_id)`,
        ...ratioSpread(later.map((t) => t.prefilled / (t.suffix ?? Number.NaN))),
      },
      {
        workload: "responses loop",
        measure: "prefilled tokens per turn, turns 2+ (median)",
        value: fmt(median(later.map((t) => t.prefilled)), 0),
        spread: `n=${later.length}`,
      },
      {
        workload: "responses loop",
        measure: "cold / continuation, time to first output item (last turn of run 1)",
        ...ratioSpread(coldRatios),
      },
    ];
    const section = [
      "## Agent tool loop through the Responses API (previous_response_id)",
      "",
      `Same ${setup.prefixTokens}-token instructions + ${tools.length} function tools as the agent loop; \`tool_choice: required\`.`,
      "Each later turn sends only `previous_response_id` and the `function_call_output` items, in the order the",
      "simulated tools finished; the edge rebuilds the conversation from the stored records. *first item ms* =",
      "time until `response.output_item.added`. *suffix* = prompt tokens − (prompt + output tokens of the previous turn).",
      "",
      "| run | turn | calls | prompt | prefilled | cached | suffix | prefilled = suffix | first item ms | decision |",
      "|---|---|---|---|---|---|---|---|---|---|",
      ...turns.map(
        (t) =>
          `| ${t.run} | ${t.turn} | ${t.calls} | ${t.prompt} | ${t.prefilled} | ${t.cached} | ${t.suffix ?? "—"} | ${t.suffix === undefined ? "—" : t.prefilled === t.suffix ? "yes" : "**NO**"} | ${fmt(t.firstItemMs, 0)} | ${t.decision} |`,
      ),
      "",
      "Continuation vs cold on the last turn's prompt (cold: the full input as a new conversation):",
      "",
      "| run | prompt | prefilled | continuation first item ms | cold prompt | cold prefilled | cold first item ms | cold / continuation |",
      "|---|---|---|---|---|---|---|---|",
      ...coldRows,
      "",
    ].join("\n");
    return { summary, section, violations };
  },
};
