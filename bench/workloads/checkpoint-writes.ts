import { DEV_ID_SECRET } from "../../gpu-worker/config.ts";
import { verifyId } from "../../shared/ids.ts";
import { countTokens, streamTurn, type TurnResult } from "../clients/edge-client.ts";
import { benchWorkerClient } from "../clients/worker-client.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import { filler } from "../text.ts";
import type { BenchStack, SummaryRow, Workload } from "../workload.ts";

const TOOL = {
  name: "Read",
  description: "Read a file and return its contents.",
  input_schema: {
    type: "object",
    properties: { file_path: { type: "string", maxLength: 16 } },
    required: ["file_path"],
  },
};

/** A system prompt of about `tokens` tokens (sized with count_tokens). */
async function systemOf(edgeUrl: string, tokens: number): Promise<string> {
  const count = (system: string) =>
    countTokens(edgeUrl, { model: "m", system, tools: [TOOL], messages: [{ role: "user", content: "hi" }] });
  const base = await count("");
  const perWord = ((await count(filler(400, 3))) - base) / 400;
  return `You are the checkpoint benchmark agent. ${filler(Math.max(10, Math.round((tokens - base) / perWord)), 3)}`;
}

/** One tool loop: every turn forces a tool call; the next answers it with ~`resultWords` words. */
class Loop {
  readonly #messages: unknown[];
  readonly #hint = crypto.randomUUID();
  #last: TurnResult | undefined;

  constructor(
    readonly edgeUrl: string,
    readonly system: string,
    task: string,
    readonly resultWords: number,
  ) {
    this.#messages = [{ role: "user", content: task }];
  }

  async turn(): Promise<TurnResult> {
    const last = this.#last;
    if (last) {
      this.#messages.push({ role: "assistant", content: last.content });
      this.#messages.push({
        role: "user",
        content: last.toolUses.map((t, i) => ({
          type: "tool_result",
          tool_use_id: t.id,
          content: filler(this.resultWords, this.#messages.length * 31 + i),
        })),
      });
    }
    const body = {
      model: "m",
      max_tokens: 200,
      system: this.system,
      tools: [TOOL],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      messages: this.#messages,
    };
    const result = await streamTurn(this.edgeUrl, body, this.#hint);
    if (result.stopReason !== "tool_use") throw new Error(`a forced tool turn ended with ${result.stopReason}`);
    this.#last = result;
    return result;
  }

  /** The worker log's short session id (the signed tool-use IDs name the session). */
  async session(): Promise<string> {
    const id = this.#last?.toolUses[0]?.id ?? "";
    const secret = process.env.FRONTIER_ID_SECRET || DEV_ID_SECRET;
    return (await verifyId(secret, id, "local"))?.session.slice(0, 8) ?? "";
  }
}

interface SavedLine {
  session: string;
  reason: string;
  tokens: number;
  bytes: number;
}

function savedLines(logs: readonly string[], from: number): SavedLine[] {
  return logs.slice(from).flatMap((line) => {
    const m = /checkpoint saved reason=(\S+) (?:session=(\w+) )?.*tokens=(\d+) bytes=(\d+)/.exec(line);
    return m ? [{ reason: m[1] ?? "", session: m[2] ?? "", tokens: Number(m[3]), bytes: Number(m[4]) }] : [];
  });
}

/** Wait until the worker has logged `count` tool-frontier saves of `loop`'s session since `from` (bounded). */
async function toolFrontierSaves(logs: readonly string[], from: number, loop: Loop, count: number): Promise<void> {
  const session = await loop.session();
  for (let i = 0; i < 1200; i++) {
    if (savedLines(logs, from).filter((s) => s.reason === "tool-frontier" && s.session === session).length >= count)
      return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the worker logged no tool-frontier checkpoint within 60 s");
}

/** KV bytes per token, from the run's whole-KV writes (a shared-state write's bytes are its payload only). */
function kvBytesPerToken(logs: readonly string[]): number {
  return Math.max(...savedLines(logs, 0).map((s) => s.bytes / s.tokens));
}

interface PauseRow {
  tokens: number;
  atOnceMs: number[];
  pausedMs: number[];
  decisions: string[];
}

async function turnTwoAtOnceVsPaused(stack: BenchStack, tokens: number, reps: number): Promise<PauseRow> {
  const system = await systemOf(stack.edgeUrl, tokens);
  const row: PauseRow = { tokens, atOnceMs: [], pausedMs: [], decisions: [] };
  // Warm the shared prefix (its anchor) so every loop's first turn starts from it.
  await new Loop(stack.edgeUrl, system, "Warm up.", 60).turn();
  for (let rep = 0; rep < reps; rep++) {
    for (const paused of [false, true]) {
      const loop = new Loop(stack.edgeUrl, system, `Task ${rep} ${paused}: read a file.`, 60);
      const mark = stack.workerLogs.length;
      await loop.turn();
      if (paused) await toolFrontierSaves(stack.workerLogs, mark, loop, 1);
      const second = await loop.turn();
      (paused ? row.pausedMs : row.atOnceMs).push(second.firstBlockMs);
      row.decisions.push(/decision=([\w-]+)/.exec(second.cache)?.[1] ?? "?");
    }
  }
  return row;
}

interface LoopBytes {
  mode: "at once" | "paused";
  turns: number;
  written: number;
  /** KV bytes of the tokens the loop added after its first turn's prompt. */
  addedKv: number;
}

async function tenTurnBytes(stack: BenchStack, tokens: number, turns: number): Promise<LoopBytes[]> {
  const system = await systemOf(stack.edgeUrl, tokens);
  const out: LoopBytes[] = [];
  for (const mode of ["at once", "paused"] as const) {
    const loop = new Loop(stack.edgeUrl, system, `Loop ${mode}: read the files.`, 120);
    const mark = stack.workerLogs.length;
    let firstPrompt = 0;
    let lastKv = 0;
    for (let turn = 0; turn < turns; turn++) {
      const result = await loop.turn();
      const prompt = result.inputTokens + result.cachedTokens;
      if (turn === 0) firstPrompt = prompt;
      lastKv = prompt + result.outputTokens;
      if (mode === "paused") await toolFrontierSaves(stack.workerLogs, mark, loop, turn + 1);
    }
    // The last turn's write (at once: the loop has paused now) lands too.
    if (mode === "at once") await toolFrontierSaves(stack.workerLogs, mark, loop, 1);
    const session = await loop.session();
    const saves = savedLines(stack.workerLogs, mark).filter((s) => s.session === session);
    const perToken = kvBytesPerToken(stack.workerLogs);
    out.push({
      mode,
      turns,
      written: saves.reduce((sum, s) => sum + s.bytes, 0),
      addedKv: (lastKv - firstPrompt) * perToken,
    });
  }
  return out;
}

interface SharedPrefix {
  sessions: number;
  prefixTokens: number;
  /** Growth of the store over the run (includes parking other sessions to make room). */
  diskBytes: number;
  /** The measured sessions' own checkpoints (what each added to the disk), median. */
  perSessionBytes: number;
  prefixKvBytes: number;
}

async function sharedPrefixDisk(stack: BenchStack, tokens: number, sessions: number): Promise<SharedPrefix> {
  const client = benchWorkerClient(stack.workerGrpcUrl);
  const system = await systemOf(stack.edgeUrl, tokens);
  const before = Number((await client.stats({})).checkpointBytes);
  const mark = stack.workerLogs.length;
  const own: number[] = [];
  for (let i = 0; i < sessions; i++) {
    const loop = new Loop(stack.edgeUrl, system, `Session ${i}: read a file.`, 60);
    await loop.turn();
    await toolFrontierSaves(stack.workerLogs, mark, loop, 1);
    const session = await loop.session();
    own.push(savedLines(stack.workerLogs, mark).find((s) => s.session === session)?.bytes ?? Number.NaN);
  }
  const after = Number((await client.stats({})).checkpointBytes);
  const perToken = kvBytesPerToken(stack.workerLogs);
  return {
    sessions,
    prefixTokens: tokens,
    diskBytes: after - before,
    perSessionBytes: median(own),
    prefixKvBytes: tokens * perToken,
  };
}

const mb = (bytes: number) => `${fmt(bytes / 1024 ** 2)} MB`;

export const checkpointWritesWorkload: Workload = {
  name: "checkpoint-writes",
  needsStack: true,
  async run({ options, stack, progress }) {
    if (!stack) throw new Error("the checkpoint-writes workload needs the stack");
    // Quick: just above the worker's default anchor threshold (1024 tokens), so a prefix is shared.
    const sizes = options.quick ? [1500] : options.contexts.filter((c) => c >= 8000);
    const summary: SummaryRow[] = [];
    const lines: string[] = ["## Durability off the critical path (through the edge)", ""];
    lines.push(
      "| prompt tokens | turn-2 TTFT, result at once (ms) | after the write landed (ms) | at once / paused | turn-2 decisions |",
    );
    lines.push("|---|---|---|---|---|");
    for (const tokens of sizes) {
      progress(`checkpoint-writes: turn 2 at once vs after a pause at ${tokens} tokens`);
      const row = await turnTwoAtOnceVsPaused(stack, tokens, options.reps);
      const ratio = ratioSpread(row.atOnceMs.map((a, i) => a / (row.pausedMs[i] ?? Number.NaN)));
      lines.push(
        `| ${tokens} | ${fmt(median(row.atOnceMs))} | ${fmt(median(row.pausedMs))} | **${ratio.value}** | ${[...new Set(row.decisions)].join(", ")} |`,
      );
      summary.push({
        workload: "checkpoint off the path",
        measure: `turn-2 TTFT at once / after a pause, ${tokens} tokens (goal ≤ 1.1x)`,
        ...ratio,
      });
    }
    const loopTokens = sizes[0] ?? 1500;
    const turns = options.quick ? 4 : 10;
    lines.push(
      "",
      `| ${turns}-turn loop | checkpoint bytes written | per turn | KV bytes the turns added | written / added |`,
      "|---|---|---|---|---|",
    );
    for (const tokens of sizes) {
      progress(`checkpoint-writes: bytes written over a ${turns}-turn loop at ${tokens} tokens`);
      for (const l of await tenTurnBytes(stack, tokens, turns)) {
        lines.push(
          `| from ${tokens} tokens, results ${l.mode} | ${mb(l.written)} | ${mb(l.written / l.turns)} | ${mb(l.addedKv)} | **${fmt(l.written / l.addedKv)}x** |`,
        );
        summary.push({
          workload: "checkpoint bytes",
          measure: `written / KV added over a ${turns}-turn loop from ${tokens} tokens, results ${l.mode} (target ≤ 4x)`,
          value: `${fmt(l.written / l.addedKv)}x`,
          spread: `${mb(l.written)} written, one run`,
        });
      }
    }
    const sessions = options.quick ? 3 : 7;
    progress(`checkpoint-writes: disk for ${sessions} sessions sharing a ${loopTokens}-token prefix`);
    const shared = await sharedPrefixDisk(stack, loopTokens, sessions);
    lines.push(
      "",
      `${shared.sessions} sessions over one ${shared.prefixTokens}-token system + tools prefix (one turn each, tool-frontier checkpoint landed): ` +
        `each session's checkpoint added ${mb(shared.perSessionBytes)} (median), ${fmt(shared.perSessionBytes / shared.prefixKvBytes, 3)}x the prefix's KV (${mb(shared.prefixKvBytes)}); ` +
        `the store grew ${mb(shared.diskBytes)} in all (including parking other sessions to make room).`,
      "",
      "Results sent at once cancel the write before it starts; the next pause writes it. A session checkpoint extends a stored prefix (the session's previous checkpoint or the tenant's system + tools anchor): the engine dumps the whole sequence into memory (/dev/shm; its API dumps a sequence, not a token range) and only the KV cells past the prefix reach the disk, as a chunk; the earlier chunks are hard-linked, and a restore assembles them into one state file (exact, no tail to re-prefill).",
      "",
    );
    summary.push({
      workload: "checkpoint disk",
      measure: `a session's own checkpoint / prefix KV, ${shared.sessions} sessions on one ${shared.prefixTokens}-token prefix`,
      value: `${fmt(shared.perSessionBytes / shared.prefixKvBytes, 3)}x`,
      spread: `${mb(shared.diskBytes)} store growth, one run`,
    });
    return { summary, section: lines.join("\n") };
  },
};
