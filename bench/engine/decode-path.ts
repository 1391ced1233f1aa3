/**
 * What each hop adds per decoded token: one stack (mid model, one sequence) answers the same
 * ~2,000-token prompt with up to 120 unconstrained sampled tokens, alternately straight from the
 * worker's h2c gRPC listener, through the edge in workerd without wrangler, and through
 * `wrangler dev`. The client times first token event → last token event per token (answers the random model
 * ends before 60 tokens are left out of the medians). Compare with
 * `tsx bench/engine/grammar-decode.ts` (the engine in process, same depth).
 *   `tsx bench/engine/decode-path.ts [--context 4000] [--tokens 120] [--reps 3]`   (context in characters)
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { Role } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { startStack } from "../../scripts/stack.ts";
import { BENCH_KEY } from "../clients/edge-client.ts";
import { benchGenerateRequest, benchWorkerClient, textContent } from "../clients/worker-client.ts";
import { median } from "../stats.ts";

const { values } = parseArgs({
  options: {
    context: { type: "string", default: "4000" },
    tokens: { type: "string", default: "120" },
    reps: { type: "string", default: "3" },
  },
});
const context = Number(values.context);
const maxTokens = Number(values.tokens);
const MIN_TOKENS = Math.min(60, maxTokens);
const stateDir = await mkdtemp(join(tmpdir(), "frontier-decode-"));
const stack = await startStack({
  workers: 1,
  edgeStateDir: stateDir,
  edgeDirect: true,
  workerEnv: {
    FRONTIER_MODEL_PATH: await ensureTestModel("mid"),
    FRONTIER_CONTEXT_SIZE: String(context + maxTokens + 256),
    FRONTIER_SEQUENCES: "1",
    FRONTIER_STATE_DIR: join(stateDir, "worker"),
  },
});

interface Decoded {
  tokens: number;
  msPerToken: number;
}

/** Per-token time between the first and the last token event of one answer. */
function perToken(first: number, last: number, tokens: number): Decoded {
  return { tokens, msPerToken: (last - first) / Math.max(tokens - 1, 1) };
}

async function viaWorker(grpcUrl: string, text: string): Promise<Decoded> {
  const request = benchGenerateRequest({
    messages: [{ role: Role.USER, content: textContent(text) }],
    sampling: { maxTokens, temperature: 1, topP: 1, topK: 0 },
  });
  let first = 0;
  let last = 0;
  let tokens = 0;
  for await (const event of benchWorkerClient(grpcUrl).generate(request)) {
    const now = performance.now();
    if (event.event.case === "textDelta" || event.event.case === "thinkingDelta") {
      if (first === 0) first = now;
      last = now;
    }
    if (event.event.case === "stop") tokens = event.event.value.usage?.outputTokens ?? 0;
  }
  return perToken(first, last, tokens);
}

async function viaEdge(url: string, headers: Record<string, string>, text: string): Promise<Decoded> {
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": BENCH_KEY, ...headers },
    body: JSON.stringify({
      model: "m",
      max_tokens: maxTokens,
      temperature: 1,
      top_p: 1,
      stream: true,
      messages: [{ role: "user", content: text }],
    }),
  });
  if (response.status !== 200 || !response.body) throw new Error(`edge answered ${response.status}`);
  let first = 0;
  let last = 0;
  let tokens = 0;
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    const now = performance.now();
    const data = decoder.decode(read.value, { stream: true });
    if (data.includes("content_block_delta")) {
      if (first === 0) first = now;
      last = now;
    }
    const usage = /"output_tokens":(\d+)/.exec(data)?.[1];
    if (usage) tokens = Number(usage);
  }
  return perToken(first, last, tokens);
}

try {
  const worker = stack.workers[0];
  const edge = stack.edgeDirect;
  if (!worker || !edge) throw new Error("no worker or no direct workerd URL");
  const results = new Map<string, number[]>();
  for (let rep = 0; rep < Number(values.reps); rep++) {
    // A fresh prompt each rep and path (a new session, nothing reused), the same length.
    const prompt = (tag: string) =>
      `${rep} ${tag} ${"the agent reads files and calls tools. ".repeat(Math.ceil(context / 40))}`.slice(0, context);
    const paths: [string, () => Promise<Decoded>][] = [
      ["worker h2c directly", () => viaWorker(worker.grpcUrl, prompt("a"))],
      ["edge, workerd without wrangler", () => viaEdge(edge.url, edge.headers, prompt("b"))],
      ["edge via wrangler dev", () => viaEdge(stack.edgeUrl, {}, prompt("c"))],
    ];
    for (const [name, run] of paths) {
      const decoded = await run();
      // An answer the random model ended early (end-of-generation sampled) says little per token.
      if (decoded.tokens >= MIN_TOKENS) results.set(name, [...(results.get(name) ?? []), decoded.msPerToken]);
      process.stdout.write(
        `rep ${rep} ${name.padEnd(24)} ${decoded.tokens} tokens, ${decoded.msPerToken.toFixed(1)} ms/token\n`,
      );
    }
  }
  for (const [name, ms] of results) {
    process.stdout.write(
      `${name.padEnd(24)} median ${median(ms).toFixed(1)} ms/token (n=${ms.length} answers of ≥ ${MIN_TOKENS} tokens)\n`,
    );
  }
} finally {
  await stack.stop();
  await rm(stateDir, { recursive: true, force: true });
}
