/**
 * A scripted Claude-Code-like agent loop through the edge (real HTTP, streaming /v1/messages):
 * a long system prompt + a dozen tool definitions (≈20k tokens by default), a user task, then turns
 * that each make 1–3 parallel tool calls (`tool_choice: any`, grammar-constrained, sampled) whose
 * results come back in ONE user message in the order the simulated tools finished — not the order
 * of the calls — exactly as Claude Code returns them.
 *
 * Per turn it records the prompt tokens, the tokens actually prefilled (`input_tokens`), the cached
 * ones (`cache_read_input_tokens`), the suffix the turn really adds (prompt of turn n minus prompt +
 * output of turn n-1, i.e. the KV the previous turn left) and the time to the first content block.
 * Correctness check (not a timing assertion): from turn 2 on, prefilled must equal the suffix.
 */
import { countTokens, streamTurn, type TurnResult } from "../clients/edge-client.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import { filler, hash32 } from "../text.ts";
import type { Workload, WorkloadContext } from "../workload.ts";

const CODE_WORDS = (
  "file path read edit write test run error build module import export function return const type " +
  "interface class async await promise string number value result config option command output line " +
  "change diff commit branch review check lint format package script server client request response"
).split(" ");

/** Claude Code's core tools, each with one short bounded argument (the grammar keeps calls small). */
const TOOL_SHAPES: ReadonlyArray<readonly [name: string, argument: string]> = [
  ["Bash", "command"],
  ["Read", "file_path"],
  ["Edit", "file_path"],
  ["Write", "file_path"],
  ["Glob", "pattern"],
  ["Grep", "pattern"],
  ["LS", "path"],
  ["WebFetch", "url"],
  ["WebSearch", "query"],
  ["TodoWrite", "todo"],
  ["Task", "description"],
  ["NotebookEdit", "notebook_path"],
];

/** How many words of tool output each tool returns (full size; --quick divides by 5). */
const RESULT_WORDS: Readonly<Record<string, readonly [min: number, max: number]>> = {
  Read: [150, 350],
  Bash: [40, 140],
  Grep: [60, 160],
  Glob: [20, 60],
  LS: [20, 60],
};

export interface AgentTool {
  name: string;
  description: string;
  input_schema: { type: "object"; properties: Record<string, object>; required: string[] };
}

export interface AgentSetup {
  system: string;
  tools: AgentTool[];
  /** Tokens of system + tools (+ the template around them), from count_tokens. */
  prefixTokens: number;
}

function toolsWith(descriptionWords: number): AgentTool[] {
  return TOOL_SHAPES.map(([name, argument], i) => ({
    name,
    description: `${name}: ${filler(descriptionWords, 100 + i, CODE_WORDS)}`,
    input_schema: {
      type: "object",
      properties: { [argument]: { type: "string", maxLength: 16, description: `The ${argument.replace("_", " ")}` } },
      required: [argument],
    },
  }));
}

/** System text + tools sized (via count_tokens) to about `targetTokens`, ~40% of it tool definitions. */
export async function buildAgentSetup(edgeUrl: string, targetTokens: number): Promise<AgentSetup> {
  const count = (system: string, tools: AgentTool[]) =>
    countTokens(edgeUrl, { model: "m", system, tools, messages: [{ role: "user", content: "hi" }] });
  const probeWords = 400;
  const base = await count("", toolsWith(1));
  const probe = await count(filler(probeWords, 1, CODE_WORDS), toolsWith(1));
  const perWord = (probe - base) / probeWords;
  const tools = toolsWith(Math.max(1, Math.round((0.4 * targetTokens) / perWord / TOOL_SHAPES.length)));
  const withTools = await count("", tools);
  const systemWords = Math.max(10, Math.round((targetTokens - withTools) / perWord));
  const system = `You are an interactive coding agent. ${filler(systemWords, 1, CODE_WORDS)}`;
  return { system, tools, prefixTokens: await count(system, tools) };
}

export interface AgentTurn {
  agent: string;
  turn: number;
  calls: number;
  /** Results in completion order, as call positions (1-based), e.g. "2,1". */
  resultOrder: string;
  promptTokens: number;
  prefilled: number;
  cached: number;
  /** New tokens this turn adds beyond the KV the previous turn left (undefined on turn 1). */
  suffix: number | undefined;
  outputTokens: number;
  firstBlockMs: number;
  totalMs: number;
  decision: string;
}

/** One request of the transcript: what was sent, and what came back, so a peer can replay it. */
export interface TranscriptTurn {
  messages: unknown[];
  /** The assistant blocks Frontier answered with. */
  content: unknown[];
}

export interface AgentTranscript {
  agent: string;
  system: string;
  tools: AgentTool[];
  turns: TranscriptTurn[];
}

/** Simulated tool output: deterministic text whose length depends on the tool. */
function toolOutput(name: string, key: string, scale: number): string {
  const [min, max] = RESULT_WORDS[name] ?? [15, 45];
  const h = hash32(key);
  const words = Math.max(4, Math.round((min + (h % (max - min + 1))) * scale));
  return filler(words, h, CODE_WORDS);
}

/** One conversation: `step()` sends the next turn and returns its measurements. */
export class Agent {
  readonly transcript: AgentTranscript;
  readonly turns: AgentTurn[] = [];
  readonly #messages: unknown[];
  readonly #hint = crypto.randomUUID();
  #last: TurnResult | undefined;

  constructor(
    readonly edgeUrl: string,
    readonly name: string,
    readonly setup: AgentSetup,
    readonly resultScale: number,
  ) {
    this.#messages = [
      { role: "user", content: `${name}: fix the failing test in src/${name}.ts, then run the whole suite.` },
    ];
    this.transcript = { agent: name, system: setup.system, tools: setup.tools, turns: [] };
  }

  /** Why this conversation stopped early (a failed request), if it did. */
  failure: string | undefined;

  /** `step()`, but a failed request ends this conversation (recorded in `failure`) instead of the run. */
  async tryStep(): Promise<AgentTurn | undefined> {
    if (this.failure !== undefined) return undefined;
    try {
      return await this.step();
    } catch (error) {
      this.failure = `${this.name} turn ${this.turns.length + 1}: ${error instanceof Error ? error.message : String(error)}`;
      return undefined;
    }
  }

  async step(): Promise<AgentTurn> {
    const turn = this.turns.length + 1;
    const messages = structuredClone(this.#messages);
    const result = await streamTurn(
      this.edgeUrl,
      {
        model: "frontier-test",
        max_tokens: 400,
        temperature: 1,
        // As Claude Code sends it. The prompt then ends inside an open thinking block and the forced-call
        // grammar closes it first, so the first content block (the empty thinking block) starts a few
        // tokens after the first token: close to time-to-first-token.
        thinking: { type: "adaptive" },
        system: this.setup.system,
        tools: this.setup.tools,
        tool_choice: { type: "any" },
        messages,
      },
      this.#hint,
    );
    const previous = this.#last;
    const promptTokens = result.inputTokens + result.cachedTokens;
    const record: AgentTurn = {
      agent: this.name,
      turn,
      calls: result.toolUses.length,
      resultOrder: "",
      promptTokens,
      prefilled: result.inputTokens,
      cached: result.cachedTokens,
      suffix: previous
        ? promptTokens - (previous.inputTokens + previous.cachedTokens + previous.outputTokens)
        : undefined,
      outputTokens: result.outputTokens,
      firstBlockMs: result.firstBlockMs,
      totalMs: result.ms,
      decision: /decision=([\w-]+)/.exec(result.cache)?.[1] ?? "?",
    };
    // The tools "run" for a deterministic simulated time; results return in the order they finish.
    const finished = result.toolUses
      .map((use, i) => ({ use, position: i + 1, ms: hash32(`${this.name}:${turn}:${i}`) % 1000 }))
      .sort((a, b) => a.ms - b.ms);
    if (finished.length > 1 && finished.every((f, i) => f.position === i + 1)) finished.reverse();
    record.resultOrder = finished.map((f) => f.position).join(",");
    this.#messages.push({ role: "assistant", content: result.content });
    // A turn that made no call (it ran out of tokens mid-call) is answered like a user would: go on.
    this.#messages.push({
      role: "user",
      content:
        finished.length === 0
          ? "Continue with the next step."
          : finished.map((f) => ({
              type: "tool_result",
              tool_use_id: f.use.id,
              content: toolOutput(f.use.name, `${this.name}:${turn}:${f.position}`, this.resultScale),
              is_error: false,
            })),
    });
    this.transcript.turns.push({ messages, content: result.content });
    this.turns.push(record);
    this.#last = result;
    return record;
  }
}

/** Turns from 2 on whose prefilled tokens differ from their suffix (the claim this loop checks). */
export function suffixViolations(turns: readonly AgentTurn[]): string[] {
  return turns
    .filter((t) => t.suffix !== undefined && t.prefilled !== t.suffix)
    .map(
      (t) =>
        `${t.agent} turn ${t.turn}: prefilled ${t.prefilled} tokens but the suffix is ${t.suffix} (decision=${t.decision})`,
    );
}

export function agentTurnsTable(turns: readonly AgentTurn[]): string {
  const lines = [
    "| agent | turn | calls | results order | prompt tokens | prefilled | cached | suffix | prefilled = suffix | first block ms | turn ms | decision |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const t of turns) {
    const ok = t.suffix === undefined ? "—" : t.prefilled === t.suffix ? "yes" : "**NO**";
    lines.push(
      `| ${t.agent} | ${t.turn} | ${t.calls} | ${t.resultOrder} | ${t.promptTokens} | ${t.prefilled} | ${t.cached} | ${t.suffix ?? "—"} | ${ok} | ${fmt(t.firstBlockMs, 0)} | ${fmt(t.totalMs, 0)} | ${t.decision} |`,
    );
  }
  return lines.join("\n");
}

export interface AgentLoopShared {
  setup: AgentSetup;
  single: AgentTranscript;
  interleaved: AgentTranscript[];
  singleTurns: AgentTurn[];
  interleavedTurns: AgentTurn[];
}

/** Run `agents` conversations turn by turn, round robin (A1 B1 C1 D1 A2 …). */
export async function runInterleaved(agents: readonly Agent[], turns: number): Promise<AgentTurn[]> {
  const out: AgentTurn[] = [];
  for (let turn = 0; turn < turns; turn++) {
    for (const agent of agents) {
      const record = await agent.tryStep();
      if (record) out.push(record);
    }
  }
  return out;
}

export const agentLoopWorkload: Workload = {
  name: "agent-loop",
  needsStack: true,
  async run({ options, stack, progress }: WorkloadContext) {
    if (!stack) throw new Error("agent-loop needs the stack");
    const scale = options.quick ? 0.2 : 1;
    const setup = await buildAgentSetup(stack.edgeUrl, options.agentPrefixTokens);
    const singles: Agent[] = [];
    for (let rep = 0; rep < options.reps; rep++) {
      progress(
        `agent loop ${rep + 1}/${options.reps}: ${setup.prefixTokens}-token system + tools, ${options.agentTurns} turns`,
      );
      const agent = new Agent(stack.edgeUrl, `agent-${rep + 1}`, setup, scale);
      for (let t = 0; t < options.agentTurns; t++) await agent.tryStep();
      singles.push(agent);
    }
    progress(`4 interleaved agents on ${options.sequences} sequences, ${options.agentTurns} turns each`);
    const four = ["A", "B", "C", "D"].map((n) => new Agent(stack.edgeUrl, `agent-${n}`, setup, scale));
    const interleaved = await runInterleaved(four, options.agentTurns);

    const singleTurns = singles.flatMap((a) => a.turns);
    const later = singleTurns.filter((t) => t.turn > 1);
    const laterFour = interleaved.filter((t) => t.turn > 1);
    const firstTurns = singleTurns.filter((t) => t.turn === 1);
    const perCall = [...singleTurns, ...interleaved].filter((t) => t.calls > 0).map((t) => t.outputTokens / t.calls);
    const summary = [
      {
        workload: "agent loop",
        measure: `prefilled / suffix, turns 2–${options.agentTurns} (${setup.prefixTokens}-token prefix)`,
        ...ratioSpread(later.map((t) => t.prefilled / (t.suffix ?? Number.NaN))),
      },
      {
        workload: "agent loop",
        measure: "prefilled tokens per turn, turns 2+ (median)",
        value: fmt(median(later.map((t) => t.prefilled)), 0),
        spread: `${Math.min(...later.map((t) => t.prefilled))}–${Math.max(...later.map((t) => t.prefilled))} (n=${later.length})`,
      },
      {
        workload: "agent loop",
        measure: "first-block ms: turn 1 cold / turn 1 from the prefix checkpoint / turns 2+ (medians)",
        value: [firstTurns.filter((t) => t.decision === "cold"), firstTurns.filter((t) => t.decision !== "cold"), later]
          .map((turns) => fmt(median(turns.map((t) => t.firstBlockMs)), 0))
          .join(" / "),
        spread: `turns 2+ ${fmt(Math.min(...later.map((t) => t.firstBlockMs)), 0)}–${fmt(Math.max(...later.map((t) => t.firstBlockMs)), 0)} (n=${later.length})`,
      },
      {
        workload: "agent loop",
        measure: "output tokens per forced call (median over turns: output tokens / calls)",
        value: fmt(median(perCall), 1),
        spread: `${fmt(Math.min(...perCall), 1)}–${fmt(Math.max(...perCall), 1)} (n=${perCall.length})`,
      },
      {
        workload: "agent loop",
        measure: `4 interleaved agents on ${options.sequences} sequences: prefilled / suffix, turns 2+`,
        ...ratioSpread(laterFour.map((t) => t.prefilled / (t.suffix ?? Number.NaN))),
      },
    ];
    const violations = [
      ...[...singles, ...four].flatMap((a) => (a.failure === undefined ? [] : [`request failed: ${a.failure}`])),
      ...suffixViolations(singleTurns),
      ...suffixViolations(interleaved),
    ];
    const section = [
      "## Agent tool loop (Claude-Code-like, through the edge)",
      "",
      `System prompt + ${setup.tools.length} tool definitions: ${setup.prefixTokens} tokens (count_tokens). Each turn is a streaming`,
      "`/v1/messages` call with `tool_choice: any` (the grammar allows 1–3 parallel calls; the random model picks how",
      "many); the next request replays the history and returns all results in one user message, in the order the",
      "simulated tools finished. *suffix* = prompt tokens of this turn − (prompt + output tokens of the previous turn).",
      'Requests carry `thinking: {type: "adaptive"}` as Claude Code\'s do; *first block ms* = time until the first',
      "content block starts — the (empty) thinking block, which starts once `</think>` is sampled, a few tokens after",
      "the first token. *turn ms* = the whole turn (prefill + decoding 2–3 calls).",
      "",
      `### One agent at a time (${options.reps} run${options.reps > 1 ? "s" : ""}; run 1's turn 1 is a cold prefill that saves a prefix checkpoint, later runs start from it)`,
      "",
      agentTurnsTable(singleTurns),
      "",
      `### 4 agents interleaved turn by turn on ${options.sequences} sequences (parking to disk checkpoints)`,
      "",
      agentTurnsTable(interleaved),
      "",
    ].join("\n");
    const shared: AgentLoopShared = {
      setup,
      single: (singles[0] as Agent).transcript,
      interleaved: four.map((a) => a.transcript),
      singleTurns: singles[0]?.turns ?? [],
      interleavedTurns: interleaved,
    };
    return { summary, section, violations, shared: shared as unknown as Record<string, unknown> };
  },
};
