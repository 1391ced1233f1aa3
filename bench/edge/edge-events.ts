/**
 * Where a continuing turn's edge overhead goes, event by event: the same growing conversation to
 * the edge in workerd without wrangler and straight to the worker's gRPC, interleaved; the
 * median time of each SSE event and each gRPC event, plus a bare authenticated `GET /v1/models`
 * (workerd's floor). Tiny model. `tsx bench/edge/edge-events.ts [--turns 30]`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { type MessageSchema, Role } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { startStack } from "../../scripts/stack.ts";
import { newSessionId } from "../../shared/ids.ts";
import { BENCH_KEY } from "../clients/edge-client.ts";
import { benchGenerateRequest, benchWorkerClient, textContent } from "../clients/worker-client.ts";
import { percentile } from "../stats.ts";

const { values } = parseArgs({ options: { turns: { type: "string", default: "30" } } });
const turns = Number(values.turns);
const WARM_UP = 5;
const dir = mkdtempSync(join(tmpdir(), "frontier-edge-events-"));
const stack = await startStack({
  workers: 1,
  edgeStateDir: dir,
  edgeDirect: true,
  workerEnv: {
    FRONTIER_MODEL_PATH: await ensureTestModel("tiny"),
    FRONTIER_CONTEXT_SIZE: "4096",
    FRONTIER_SEQUENCES: "2",
    FRONTIER_STATE_DIR: join(dir, "worker"),
  },
});
const samples = new Map<string, number[]>();
const add = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);
try {
  const edge = stack.edgeDirect;
  const worker = stack.workers[0];
  if (!edge || !worker) throw new Error("no direct workerd URL (wrangler's debug log did not name it) or no worker");
  const client = benchWorkerClient(worker.grpcUrl);
  const headers = { "x-api-key": BENCH_KEY, "anthropic-version": "2023-06-01", ...edge.headers };
  const hint = crypto.randomUUID();
  const messages: unknown[] = [];
  const direct: MessageInitShape<typeof MessageSchema>[] = [];
  const sessionId = newSessionId();
  for (let i = 0; i < turns + WARM_UP; i++) {
    const keep = i >= WARM_UP;
    messages.push({ role: "user", content: "ping" });
    const t0 = performance.now();
    const response = await fetch(`${edge.url}/v1/messages`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", "x-claude-code-session-id": hint },
      body: JSON.stringify({ model: "m", max_tokens: 1, temperature: 0, stream: true, messages }),
    });
    if (keep) add("edge: response headers", performance.now() - t0);
    const decoder = new TextDecoder();
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const at = performance.now() - t0;
      for (const m of decoder.decode(read.value, { stream: true }).matchAll(/event: (\w+)/g)) {
        if (keep) add(`edge: ${m[1]}`, at);
      }
    }
    const edgeEnd = performance.now() - t0;
    if (keep) add("edge: end of stream", edgeEnd);
    messages.push({ role: "assistant", content: "pong" });
    direct.push({ role: Role.USER, content: textContent("ping") });
    const request = benchGenerateRequest({ sessionId, messages: direct, sampling: { maxTokens: 1, temperature: 0 } });
    const d0 = performance.now();
    for await (const event of client.generate(request)) {
      if (keep) add(`gRPC: ${event.event.case ?? "?"}`, performance.now() - d0);
    }
    const directEnd = performance.now() - d0;
    if (keep) add("gRPC: end of stream", directEnd);
    // The same round's two turns, differenced: less noisy than the difference of two medians.
    if (keep) add("paired: edge end - gRPC end", edgeEnd - directEnd);
    direct.push({ role: Role.ASSISTANT, content: textContent("pong") });
  }
  for (let i = 0; i < turns + WARM_UP; i++) {
    const t0 = performance.now();
    await (await fetch(`${edge.url}/v1/models`, { headers })).text();
    if (i >= WARM_UP) add("floor: GET /v1/models via workerd", performance.now() - t0);
  }
  for (const [name, ms] of samples) {
    const quartiles = `p25 ${percentile(ms, 25).toFixed(2)}, p75 ${percentile(ms, 75).toFixed(2)}`;
    process.stdout.write(`${name.padEnd(40)} ${percentile(ms, 50).toFixed(2)} ms (${quartiles}; n=${ms.length})\n`);
  }
} finally {
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
}
