/**
 * `npm run bench -- --only load [--agents n] [--load key=value,…]`: K concurrent agents through the
 * edge of a pooled stack (WORKERS=2 by default), wave after wave of fresh conversations, then the
 * same conversations against llama-server. See README.md in this folder.
 */
import { cpus, loadavg } from "node:os";
import { basename } from "node:path";
import { countTokens } from "../../clients/edge-client.ts";
import { llamaServerBinary } from "../../trace/targets.ts";
import type { Workload, WorkloadResult } from "../../workload.ts";
import { type AgentRun, type AgentSpec, runAgent } from "./load-agent.ts";
import { loadChart } from "./load-chart.ts";
import { frontierFigures, peerFigures, poolFigures } from "./load-figures.ts";
import { type LoadReport, loadSection, loadSummary, loadViolations } from "./load-report.ts";
import { LOAD_TOOLS, systemPrompt } from "./load-script.ts";
import type { LoadSettings } from "./load-settings.ts";
import { type LoadStack, startContention, startLoadStack } from "./load-stack.ts";
import { replayOnLlamaServer } from "./peer-replay.ts";
import { PoolSampler, rssBytes } from "./pool-sampler.ts";

interface Wave {
  specs: AgentSpec[];
  runs: AgentRun[];
  startedMs: number;
}

/** Words of filler that make a system prompt of about `tokens` tokens, measured with count_tokens. */
async function systemWords(edgeUrl: string, tokens: number): Promise<number> {
  const count = (system: string) =>
    countTokens(edgeUrl, { model: "m", system, messages: [{ role: "user", content: "hi" }] });
  const probe = 400;
  const base = await count(systemPrompt("probe", 1));
  const perWord = ((await count(systemPrompt("probe", probe))) - base) / (probe - 1);
  return Math.max(10, Math.round((tokens - base) / perWord));
}

function waveSpecs(wave: number, settings: LoadSettings, apiKeys: readonly string[], words: number): AgentSpec[] {
  return Array.from({ length: settings.agents }, (_, i) => {
    const name = `w${wave}-a${i + 1}`;
    const tenant = i % settings.tenants;
    return {
      wave,
      name,
      protocol: settings.protocols[i % settings.protocols.length] ?? "messages",
      tenant,
      apiKey: apiKeys[tenant] ?? "",
      system: systemPrompt(name, words),
      tools: LOAD_TOOLS,
    };
  });
}

async function runFrontier(
  load: LoadStack,
  settings: LoadSettings,
  progress: (m: string) => void,
): Promise<{ waves: Wave[]; sampler: PoolSampler; rss: Map<string, number[]> }> {
  const edgeUrl = load.stack.edgeUrl;
  const words = await systemWords(edgeUrl, settings.systemTokens);
  const rss = new Map(load.stack.workers.map((w) => [w.id, [rssBytes(w.process.pid)]]));
  const started = performance.now();
  const clock = () => performance.now() - started;
  const sampler = new PoolSampler(edgeUrl, clock);
  const contention = startContention(settings.contend);
  if (settings.contend > 0)
    progress(`load: ${settings.contend} CPU-bound loops running (PIDs ${contention.pids.join(", ")})`);
  sampler.start();
  const waves: Wave[] = [];
  try {
    for (let w = 1; w <= settings.waves; w++) {
      const specs = waveSpecs(w, settings, load.apiKeys, words);
      const startedMs = clock();
      progress(`load: wave ${w} of ${settings.waves}: ${specs.length} conversations at once`);
      const runs = await Promise.all(specs.map((spec) => runAgent(spec, edgeUrl, settings, clock)));
      waves.push({ specs, runs, startedMs });
      const records = runs.flatMap((r) => r.records);
      const failed = records.filter((r) => r.outcome === "failed").length;
      progress(
        `load: wave ${w}: ${records.length - failed} turns completed, ${failed} failed, in ${((clock() - startedMs) / 1000).toFixed(0)} s`,
      );
      await new Promise((r) => setTimeout(r, 1000));
      for (const worker of load.stack.workers) rss.get(worker.id)?.push(rssBytes(worker.process.pid));
    }
  } finally {
    sampler.stop();
    contention.stop();
  }
  return { waves, sampler, rss };
}

export const loadWorkload: Workload = {
  name: "load",
  needsStack: false,
  // Only when asked for: it starts a stack of its own (30-80 s on 2 cores), too long for npm test's
  // bench tier (`--quick` of every workload within 10 minutes); `--quick --only load` runs it small.
  enabled: (options) => options.loadRequested,
  async run({ options, progress }): Promise<WorkloadResult> {
    const settings = options.load;
    const begun = performance.now();
    const loadStart = loadavg()[0] ?? 0;
    const load = await startLoadStack(settings, options.modelPath, progress);
    const restarts = new Map<string, number>();
    let frontier: Awaited<ReturnType<typeof runFrontier>>;
    try {
      frontier = await runFrontier(load, settings, progress);
    } finally {
      for (const w of load.stack.workers) restarts.set(w.id, w.restarts);
      await load.stop();
    }
    const { waves, sampler, rss } = frontier;
    const binary = settings.peer ? llamaServerBinary(options.llamaServer) : undefined;
    let peer: LoadReport["peer"] = settings.peer
      ? "skipped: no binary (build one with scripts/build-llama-server.sh, or pass --llama-server PATH)"
      : "skipped (--load peer=off)";
    if (binary) {
      const contention = startContention(settings.contend);
      try {
        peer = peerFigures(await replayOnLlamaServer(binary, options.modelPath, settings, waves, progress));
      } catch (error) {
        peer = `failed: ${error instanceof Error ? error.message : String(error)}`;
      } finally {
        contention.stop();
      }
    }
    const records = waves.flatMap((w) => w.runs.flatMap((r) => r.records));
    const runs = waves.flatMap((w) => w.runs);
    const chartFile = `load-${settings.agents}-agents.svg`;
    const pool = poolFigures(
      sampler.ordered(),
      records.filter((r) => r.outcome === "completed").map((r) => r.sentAtMs + r.totalMs),
    );
    const report: LoadReport = {
      settings,
      modelName: basename(options.modelPath),
      frontier: frontierFigures(
        records,
        settings.agents * settings.waves * settings.turns,
        runs.reduce((sum, r) => sum + (r.records.at(-1)?.outcome === "failed" ? r.notSent : 0), 0),
        runs.filter((r) => r.records.at(-1)?.outcome === "completed" && r.notSent > 0).length,
      ),
      pool,
      samplerFailures: sampler.failures,
      rss,
      restarts,
      peer,
      chartFile,
      seconds: (performance.now() - begun) / 1000,
      host: { loadStart, loadEnd: loadavg()[0] ?? 0, cores: cpus().length },
    };
    const chart = loadChart({
      title: `Load: ${settings.agents} agents, ${settings.workers} workers × ${settings.sequences} sequences${settings.contend > 0 ? `, ${settings.contend} busy loops` : ""}`,
      samples: sampler.ordered(),
      waveStartsMs: waves.map((w) => w.startedMs),
      stalls: pool.stalls,
    });
    return {
      summary: loadSummary(report),
      section: loadSection(report),
      violations: loadViolations(report),
      files: { [chartFile]: chart },
    };
  },
};
