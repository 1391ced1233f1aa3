/**
 * The same conversations against llama.cpp's llama-server: one server per Frontier worker, each with
 * `--parallel` = that worker's sequences (1 thread, the same GGUF and KV cells per slot), agents split
 * over them by index. Each wave's agents run at once, as on Frontier, with the same tool pauses; each
 * request carries the history Frontier's run produced (its tool calls as `<tool_call>` text, results as
 * `<tool_response>`, the ChatML/Hermes rendering bench/peer/peer-llama-server.ts uses) through
 * `/v1/chat/completions` — llama-server has no continuation by ID — and asks for as many tokens as
 * Frontier sampled on that turn (`ignore_eos`, a lowercase grammar: its chat parser fails the random
 * model's raw bytes). A turn Frontier's client aborted is aborted here too at its first token and
 * re-sent. Only the turns Frontier completed are replayed. Turn deadline as on Frontier.
 */
import { stopChild } from "../../../scripts/stack.ts";
import { decodeSseStream } from "../../../test/support/sse-decoder.ts";
import { startLlamaServer } from "../../peer/llama-server-process.ts";
import { chatMessages } from "../../peer/peer-llama-server.ts";
import type { AgentRun, AgentSpec, TranscriptStep } from "./load-agent.ts";
import { toolPauseMs } from "./load-script.ts";
import type { LoadSettings } from "./load-settings.ts";

export interface PeerTurnRecord {
  wave: number;
  agent: string;
  turn: number;
  outcome: "completed" | "failed";
  reason?: string;
  ttftMs: number;
  totalMs: number;
  /** llama-server's `timings.prompt_n` (prefilled) and `cache_n` (reused). */
  prefilled: number;
  cached: number;
  resent: boolean;
  finishedAtMs: number;
}

type Block = { type: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: string };

/** The Anthropic-shaped history up to and including step `upTo`'s input. */
function historyOf(steps: readonly TranscriptStep[], upTo: number): unknown[] {
  const messages: { role: "user" | "assistant"; content: string | Block[] }[] = [];
  steps.slice(0, upTo + 1).forEach((step, i) => {
    const input = step.input;
    messages.push({
      role: "user",
      content:
        input.kind === "task"
          ? input.text
          : input.results.map((r) => ({ type: "tool_result", tool_use_id: r.call.id, content: r.output })),
    });
    if (i < upTo) {
      messages.push({
        role: "assistant",
        content: step.calls.map((c) => ({ type: "tool_use", id: c.id, name: c.name, input: parseArgs(c.arguments) })),
      });
    }
  });
  return messages;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/** One streamed chat completion; rejects on a non-200, a stream error or the signal. */
async function peerRequest(
  url: string,
  messages: unknown,
  outputTokens: number,
  signal: AbortSignal,
  onFirst: () => void,
): Promise<{ prefilled: number; cached: number }> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    signal,
    body: JSON.stringify({
      model: "peer",
      messages,
      max_tokens: Math.max(1, outputTokens),
      ignore_eos: true,
      temperature: 1,
      grammar: "root ::= [a-z ]*",
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`HTTP ${res.status}`);
  let timings: { prompt_n?: number; cache_n?: number } | undefined;
  for await (const event of decodeSseStream(res.body)) {
    if (event.data === "[DONE]") break;
    const data = JSON.parse(event.data) as {
      choices?: { delta?: { content?: string | null } }[];
      timings?: { prompt_n?: number; cache_n?: number };
      error?: unknown;
    };
    if (data.error) throw new Error("stream error");
    if (data.choices?.some((c) => (c.delta?.content ?? "") !== "")) onFirst();
    if (data.timings) timings = data.timings;
  }
  if (!timings) throw new Error("stream cut");
  return { prefilled: timings.prompt_n ?? Number.NaN, cached: timings.cache_n ?? Number.NaN };
}

async function replayAgent(
  url: string,
  spec: AgentSpec,
  run: AgentRun,
  settings: LoadSettings,
  clock: () => number,
): Promise<PeerTurnRecord[]> {
  const out: PeerTurnRecord[] = [];
  const transcript = { agent: spec.name, system: spec.system, tools: [...spec.tools], turns: [] };
  for (const [i, step] of run.steps.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, toolPauseMs(spec.name, i, settings.toolPauseMs)));
    const messages = chatMessages(transcript, historyOf(run.steps, i));
    // Plain timers and controllers (no AbortSignal.timeout/any: fetch can lose those to GC, nodejs/undici#4068).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), settings.turnDeadlineMs);
    let sentAt = clock();
    let firstAt = Number.NaN;
    const record = { wave: spec.wave, agent: spec.name, turn: i + 1, resent: false };
    try {
      if (step.aborted) {
        const client = new AbortController();
        const onDeadline = () => client.abort();
        deadline.signal.addEventListener("abort", onDeadline, { once: true });
        await peerRequest(url, messages, step.outputTokens, client.signal, () => client.abort())
          .catch((error: unknown) => {
            if (!client.signal.aborted || deadline.signal.aborted) throw error;
          })
          .finally(() => deadline.signal.removeEventListener("abort", onDeadline));
        record.resent = true;
        await new Promise((r) => setTimeout(r, 100));
        sentAt = clock();
      }
      const timings = await peerRequest(url, messages, step.outputTokens, deadline.signal, () => {
        if (Number.isNaN(firstAt)) firstAt = clock();
      });
      const done = clock();
      out.push({
        ...record,
        outcome: "completed",
        ttftMs: firstAt - sentAt,
        totalMs: done - sentAt,
        ...timings,
        finishedAtMs: done,
      });
    } catch (error) {
      const reason = deadline.signal.aborted
        ? "deadline"
        : error instanceof Error
          ? error.message.slice(0, 80)
          : String(error);
      const done = clock();
      out.push({
        ...record,
        outcome: "failed",
        reason,
        ttftMs: Number.NaN,
        totalMs: done - sentAt,
        prefilled: 0,
        cached: 0,
        finishedAtMs: done,
      });
      break;
    } finally {
      clearTimeout(timer);
      deadline.abort();
    }
  }
  return out;
}

/** Replays every wave's conversations on fresh llama-servers; the turns, wave by wave. */
export async function replayOnLlamaServer(
  binary: string,
  modelPath: string,
  settings: LoadSettings,
  waves: readonly { specs: AgentSpec[]; runs: AgentRun[] }[],
  progress: (m: string) => void,
): Promise<PeerTurnRecord[]> {
  const started = await Promise.allSettled(
    Array.from({ length: settings.workers }, () =>
      startLlamaServer(binary, modelPath, settings.contextSize, settings.sequences),
    ),
  );
  const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await Promise.all(servers.map((s) => stopChild(s.child)));
    throw failed.reason;
  }
  const begun = performance.now();
  const clock = () => performance.now() - begun;
  try {
    const out: PeerTurnRecord[] = [];
    for (const [w, wave] of waves.entries()) {
      progress(`load: llama-server wave ${w + 1} of ${waves.length} (${wave.specs.length} conversations)`);
      const turns = await Promise.all(
        wave.specs.map((spec, i) =>
          replayAgent(servers[i % servers.length]?.url ?? "", spec, wave.runs[i] as AgentRun, settings, clock),
        ),
      );
      out.push(...turns.flat());
    }
    return out;
  } finally {
    await Promise.all(servers.map((s) => stopChild(s.child)));
  }
}
