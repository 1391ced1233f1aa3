/**
 * Peer comparison: the agent loop's conversations replayed against llama.cpp's own `llama-server`
 * on the same GGUF (`--llama-server PATH`; build one with scripts/build-llama-server.sh).
 *
 * A random-weight model cannot hold a tool conversation through llama-server's chat parser, so the
 * peer gets the *same transcript* Frontier produced: every request carries the history Frontier's
 * run sent, with Frontier's tool calls as assistant text (`<tool_call>` markup, as the ChatML/Hermes
 * format renders them) and the tool results as `<tool_response>` user text, via
 * `/v1/chat/completions` (rendered by llama-server with the GGUF's ChatML template). Each request
 * asks for as many output tokens as Frontier sampled on that turn (`ignore_eos`), so "turn ms"
 * compares prefill + the same number of decoded tokens. Prefilled/cached come from llama-server's
 * `timings` (`prompt_n`, `cache_n`). llama-server runs with `--parallel 2` (2 slots, like Frontier's
 * 2 sequences), 1 thread, flash attention off, and its prompt-cache defaults as shipped
 * (`cache_prompt`, host-memory prompt cache `--cache-ram`, idle-slot saving).
 */
import { TOOLS_INTRO, TOOLS_OUTRO } from "../../gpu-worker/chat/families/qwen/chatml.ts";
import { stopChild } from "../../scripts/stack.ts";
import { fmt, median, ratioSpread } from "../stats.ts";
import type { Workload } from "../workload.ts";
import {
  Agent,
  type AgentLoopShared,
  type AgentTool,
  type AgentTranscript,
  type AgentTurn,
} from "../workloads/agent-loop.ts";
import { batchSize, kernelParity, llamaServerCpuFeatures, startLlamaServer } from "./llama-server-process.ts";
import { mappedLlamaLibraries } from "./mapped-kernels.ts";

type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

/** JSON with `, ` and `: ` separators, as the Hermes/Qwen template (Python's json.dumps) prints it. */
function spacedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(spacedJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}: ${spacedJson(v)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value);
}

function toolsText(tools: readonly AgentTool[]): string {
  const lines = tools.map((t) =>
    spacedJson({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }),
  );
  return `${TOOLS_INTRO}\n${lines.join("\n")}${TOOLS_OUTRO}`;
}

type Block = { type: string; text?: string; name?: string; input?: unknown; content?: string };

/** The Anthropic-shaped history as ChatML/Hermes text messages. */
export function chatMessages(transcript: AgentTranscript, messages: readonly unknown[]): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "system", content: `${transcript.system}\n\n${toolsText(transcript.tools)}` }];
  for (const message of messages as { role: "user" | "assistant"; content: string | Block[] }[]) {
    if (typeof message.content === "string") {
      out.push({ role: message.role, content: message.content });
      continue;
    }
    const parts = message.content.map((b) => {
      if (b.type === "tool_use")
        return `<tool_call>\n${spacedJson({ name: b.name, arguments: b.input })}\n</tool_call>`;
      if (b.type === "tool_result") return `<tool_response>\n${b.content ?? ""}\n</tool_response>`;
      return b.text ?? "";
    });
    out.push({ role: message.role, content: parts.filter((p) => p !== "").join("\n") });
  }
  return out;
}

interface PeerTurn {
  agent: string;
  turn: number;
  promptTokens: number;
  prefilled: number;
  cached: number;
  ttftMs: number;
  totalMs: number;
}

/** One streamed chat completion; time to first token, total time and the server's prompt timings. */
async function peerTurn(
  url: string,
  messages: ChatMessage[],
  outputTokens: number,
): Promise<Omit<PeerTurn, "agent" | "turn">> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "peer",
      messages,
      max_tokens: Math.max(1, outputTokens),
      ignore_eos: true,
      temperature: 1,
      // Unconstrained, the random model's bytes fail llama-server's chat output parser (HTTP 500
      // "does not match the expected … format"); Frontier's turns are grammar-constrained too.
      grammar: "root ::= [a-z ]*",
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (res.status !== 200 || !res.body) throw new Error(`llama-server answered ${res.status}: ${await res.text()}`);
  let ttftMs = Number.NaN;
  let timings: { prompt_n?: number; cache_n?: number } = {};
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = res.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (!line.startsWith("data:") || line === "data: [DONE]") continue;
      const data = JSON.parse(line.slice(5)) as {
        choices?: { delta?: { content?: string | null } }[];
        timings?: { prompt_n?: number; cache_n?: number };
        error?: { message?: string };
      };
      if (data.error) throw new Error(`llama-server stream error: ${data.error.message}`);
      if (Number.isNaN(ttftMs) && data.choices?.some((c) => (c.delta?.content ?? "") !== "")) {
        ttftMs = performance.now() - started;
      }
      if (data.timings) timings = data.timings;
    }
  }
  const prefilled = timings.prompt_n ?? Number.NaN;
  const cached = timings.cache_n ?? Number.NaN;
  return { promptTokens: prefilled + cached, prefilled, cached, ttftMs, totalMs: performance.now() - started };
}

async function replay(
  url: string,
  transcripts: readonly AgentTranscript[],
  frontierTurns: readonly AgentTurn[],
  progress: (message: string) => void,
): Promise<PeerTurn[]> {
  const out: PeerTurn[] = [];
  const turns = Math.max(...transcripts.map((t) => t.turns.length));
  for (let turn = 0; turn < turns; turn++) {
    for (const transcript of transcripts) {
      const step = transcript.turns[turn];
      if (!step) continue;
      const frontier = frontierTurns.find((t) => t.agent === transcript.agent && t.turn === turn + 1);
      const result = await peerTurn(url, chatMessages(transcript, step.messages), frontier?.outputTokens ?? 1);
      out.push({ agent: transcript.agent, turn: turn + 1, ...result });
      progress(
        `  llama-server ${transcript.agent} turn ${turn + 1}: prefilled ${result.prefilled}, cached ${result.cached}`,
      );
    }
  }
  return out;
}

/** Quiet time before each request of the paired phase: neither server's after-turn work overlaps the other's turn. */
const PAIR_SETTLE_MS = 1000;

/**
 * The same comparison turn by turn: fresh agents (from the prefix checkpoint on Frontier's side),
 * each Frontier turn replayed on llama-server right after it, so that this machine's drift over
 * minutes falls on both sides of a pair alike instead of on one phase.
 */
async function paired(
  url: string,
  edgeUrl: string,
  loop: AgentLoopShared,
  agents: number,
  turns: number,
  progress: (message: string) => void,
): Promise<{ frontier: AgentTurn[]; peer: PeerTurn[] }> {
  const frontier: AgentTurn[] = [];
  const peer: PeerTurn[] = [];
  const settle = () => new Promise((r) => setTimeout(r, PAIR_SETTLE_MS));
  for (let a = 1; a <= agents; a++) {
    const agent = new Agent(edgeUrl, `paired-${a}`, loop.setup, 1);
    for (let t = 0; t < turns; t++) {
      await settle();
      const turn = await agent.step();
      const step = agent.transcript.turns.at(-1);
      if (!step) break;
      await settle();
      const result = await peerTurn(url, chatMessages(agent.transcript, step.messages), turn.outputTokens);
      frontier.push(turn);
      peer.push({ agent: agent.name, turn: turn.turn, ...result });
      progress(`  paired ${agent.name} turn ${turn.turn}: ${fmt(turn.totalMs, 0)} ms / ${fmt(result.totalMs, 0)} ms`);
    }
  }
  return { frontier, peer };
}

function sideBySide(frontier: readonly AgentTurn[], peer: readonly PeerTurn[]): string {
  const lines = [
    "| agent | turn | prompt tokens (Frontier / llama-server) | prefilled (F / L) | cached (F / L) | suffix (F) | turn ms (F / L) | first block ms (F) / first token ms (L) |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const p of peer) {
    const f = frontier.find((t) => t.agent === p.agent && t.turn === p.turn);
    if (!f) continue;
    lines.push(
      `| ${p.agent} | ${p.turn} | ${f.promptTokens} / ${p.promptTokens} | ${f.prefilled} / **${p.prefilled}** | ${f.cached} / ${p.cached} | ${f.suffix ?? "—"} | ${fmt(f.totalMs, 0)} / ${fmt(p.totalMs, 0)} | ${fmt(f.firstBlockMs, 0)} / ${fmt(p.ttftMs, 0)} |`,
    );
  }
  return lines.join("\n");
}

function summarise(label: string, frontier: readonly AgentTurn[], peer: readonly PeerTurn[]) {
  const later = peer.filter((p) => p.turn > 1);
  const pairs = later.flatMap((p) => {
    const f = frontier.find((t) => t.agent === p.agent && t.turn === p.turn);
    return f ? [{ f, p }] : [];
  });
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return [
    {
      workload: "vs llama-server",
      measure: `${label}: tokens prefilled on turns 2+ (Frontier vs llama-server, total)`,
      value: `${sum(pairs.map((x) => x.f.prefilled))} vs ${sum(pairs.map((x) => x.p.prefilled))}`,
      spread: `median per turn ${fmt(median(pairs.map((x) => x.f.prefilled)), 0)} vs ${fmt(median(pairs.map((x) => x.p.prefilled)), 0)} (n=${pairs.length})`,
    },
    {
      workload: "vs llama-server",
      measure: `${label}: llama-server first token / Frontier first block, turns 2+`,
      ...ratioSpread(pairs.map((x) => x.p.ttftMs / x.f.firstBlockMs)),
    },
    {
      workload: "vs llama-server",
      measure: `${label}: llama-server / Frontier turn time (same output tokens), turns 2+`,
      ...ratioSpread(pairs.map((x) => x.p.totalMs / x.f.totalMs)),
    },
  ];
}

export const llamaServerWorkload: Workload = {
  name: "llama-server",
  needsStack: false,
  enabled: (options) => options.llamaServer !== undefined,
  async run({ options, stack, earlier, progress }) {
    const binary = options.llamaServer;
    if (!binary) throw new Error("--llama-server PATH is required");
    const loop = earlier.get("agent-loop") as AgentLoopShared | undefined;
    if (!loop) throw new Error("the llama-server comparison replays the agent-loop workload's transcripts: run both");
    progress(`llama-server (${binary}) on the same GGUF, 2 slots`);
    const server = await startLlamaServer(binary, options.modelPath, options.contextSize);
    try {
      progress("llama-server: the single agent's transcript");
      const single = await replay(server.url, [loop.single], loop.singleTurns, progress);
      progress("llama-server: 4 interleaved agents' transcripts on 2 slots");
      const four = await replay(server.url, loop.interleaved, loop.interleavedTurns, progress);
      const pairs = stack ? (options.quick ? 1 : 3) : 0;
      progress(`llama-server: ${pairs} more agents, each Frontier turn followed by its replay`);
      const pair = stack
        ? await paired(server.url, stack.edgeUrl, loop, pairs, options.agentTurns, progress)
        : { frontier: [], peer: [] };
      const mapped = {
        worker: mappedLlamaLibraries(stack?.workerPid?.()),
        server: mappedLlamaLibraries(server.child.pid),
      };
      const props = await fetch(`${server.url}/props`)
        .then((r) => r.json() as Promise<{ build_info?: string }>)
        .catch(() => ({ build_info: undefined }));
      const serverFeatures = await llamaServerCpuFeatures(binary, options.modelPath);
      const engineBuild = stack?.engineBuild ?? "unknown";
      const parity = kernelParity(engineBuild, serverFeatures, mapped);
      return {
        summary: [
          {
            workload: "vs llama-server",
            measure: "kernels: Frontier's engine build vs llama-server's (same llama.cpp source)",
            value: parity.equal ? "equal" : "NOT equal",
            spread: parity.how,
          },
          ...summarise("one agent", loop.singleTurns, single),
          ...summarise("4 agents on 2 slots", loop.interleavedTurns, four),
          ...(pair.peer.length > 0
            ? summarise(`one agent, paired turn by turn (${pairs} agents)`, pair.frontier, pair.peer)
            : []),
        ],
        section: [
          "## Peer: the same agent loop against llama.cpp's llama-server",
          "",
          `- llama-server: build ${props.build_info ?? "?"} (scripts/build-llama-server.sh: the llama.cpp source node-llama-cpp bundles, Release); CPU features: ${serverFeatures}; libraries: ${mapped.server.join(", ") || "?"}`,
          `- Frontier worker: ${engineBuild}; libraries: ${mapped.worker.join(", ") || "?"}`,
          `- ${parity.line}`,
          "",
          `Same GGUF, \`--parallel 2 -t 1 -fa off -b ${batchSize()} -ub ${batchSize()}\`, prompt-cache defaults as shipped.`,
          "It replays Frontier's transcript (the tool calls",
          "Frontier sampled, as `<tool_call>` assistant text; results as `<tool_response>` user text) through",
          "`/v1/chat/completions`, asking for the same number of output tokens Frontier sampled on each turn (`ignore_eos`;",
          "output constrained to lowercase ASCII by a grammar, because llama-server's chat parser answers HTTP 500 to the",
          "random model's raw bytes; Frontier's turns are grammar-constrained too). So both",
          "prefill the same conversation and decode the same number of tokens; llama-server's prefilled/cached are its",
          "`timings.prompt_n` / `timings.cache_n`. What differs by construction: llama-server re-tokenizes the assistant",
          "turn it did not generate (Frontier continues the exact sampled tokens), and its chat template renders the",
          "conversation with slightly different framing (a few tokens per message).",
          "",
          "### One agent",
          "",
          sideBySide(loop.singleTurns, single),
          "",
          "### 4 agents interleaved turn by turn on 2 slots / 2 sequences",
          "",
          sideBySide(loop.interleavedTurns, four),
          "",
          `### One agent, paired turn by turn (${pairs} fresh agents)`,
          "",
          `Each Frontier turn is followed by its replay on llama-server, ${PAIR_SETTLE_MS} ms apart, so that both sides of a`,
          "pair run under the same machine conditions (the phases above run minutes apart).",
          "",
          sideBySide(pair.frontier, pair.peer),
          "",
        ].join("\n"),
      };
    } finally {
      await stopChild(server.child);
    }
  },
};
