/**
 * Starting and stopping the replay's systems: the Frontier stack (edge in workerd via wrangler + N
 * workers, 2 sequences each) and llama-server (same GGUF, the same 2 slots and KV cells per slot,
 * its prompt cache and slot reuse on), plus the worker metrics the report reads.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, type Stack, startStack, stopChild } from "../../scripts/stack.ts";
import { startLlamaServer } from "../peer/llama-server-process.ts";

const METRICS_TOKEN = "trace-replay-metrics-token";

export const SEQUENCES = 2;

export interface RunningFrontier {
  edgeUrl: string;
  stack: Stack;
  /** Summed counters of every worker's /metrics. */
  metrics(): Promise<Map<string, number>>;
  stop(): Promise<void>;
}

export async function startFrontier(
  workers: number,
  modelPath: string,
  contextSize: number,
  env: Record<string, string> = {},
): Promise<RunningFrontier> {
  const dir = mkdtempSync(join(tmpdir(), "frontier-trace-"));
  const stack = await startStack({
    workers,
    edgeStateDir: join(dir, "edge"),
    workerEnv: {
      FRONTIER_MODEL_PATH: modelPath,
      FRONTIER_CONTEXT_SIZE: String(contextSize),
      FRONTIER_SEQUENCES: String(SEQUENCES),
      FRONTIER_METRICS_PORT: "0",
      FRONTIER_METRICS_TOKEN: METRICS_TOKEN,
      ...env,
    },
    workerEnvFor: (id) => ({ FRONTIER_STATE_DIR: join(dir, id) }),
    verbose: process.env.FRONTIER_BENCH_VERBOSE === "1",
  });
  return {
    edgeUrl: stack.edgeUrl,
    stack,
    async metrics() {
      const sums = new Map<string, number>();
      for (const worker of stack.workers) {
        if (!worker.opsUrl) continue;
        const text = await fetch(`${worker.opsUrl}/metrics`, {
          headers: { authorization: `Bearer ${METRICS_TOKEN}` },
        }).then((r) => r.text());
        for (const [name, value] of parsePrometheus(text)) sums.set(name, (sums.get(name) ?? 0) + value);
      }
      return sums;
    },
    async stop() {
      await stack.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `name{labels} value` lines, labels kept in the key (`name{decision="live"}`). */
export function parsePrometheus(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const match = /^(\S+?)(\{[^}]*\})?\s+(\S+)$/.exec(line.trim());
    if (!match) continue;
    const labels = (match[2] ?? "").replace(/,?(model_name|engine)="[^"]*"/g, "").replace(/^\{,/, "{");
    const key = `${match[1]}${labels === "{}" ? "" : labels}`;
    out.set(key, (out.get(key) ?? 0) + Number(match[3]));
  }
  return out;
}

/** The llama-server binary: --llama-server PATH, else the default build of scripts/build-llama-server.sh. */
export function llamaServerBinary(given: string | undefined): string | undefined {
  if (given) return given;
  const built = join(REPO_ROOT, ".llama-server/llama-server-prebuilt");
  return existsSync(built) ? built : undefined;
}

export async function startPeer(binary: string, modelPath: string, contextSize: number) {
  // startLlamaServer: --parallel 2, -c = 2 × contextSize (the same KV cells as 2 Frontier sequences),
  // 1 thread, flash attention off, the same batch; prompt cache (cache_prompt, --cache-ram) as shipped.
  const server = await startLlamaServer(binary, modelPath, contextSize);
  return { url: server.url, log: server.log, stop: () => stopChild(server.child) };
}
