/**
 * What the worker's per-token path adds to the engine's decode: one worker (mid model, prebuilt or
 * local engine) answers a ~4,000-token prompt with 120 sampled tokens over its h2c gRPC listener; the
 * client times the gaps between token events. Compare with `tsx bench/grammar-decode.ts` (the engine
 * in process, same depth). `tsx bench/decode-path.ts [--context 4000] [--tokens 120] [--reps 3]`.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { ensureTestModel } from "../native/model/gguf-writer.ts";
import { GenerateRequestSchema, Role } from "../proto/gen/frontier/worker/v1/worker_pb.ts";
import { startWorker, stopChild } from "../scripts/stack.ts";
import { newSessionId } from "../shared/ids.ts";
import { percentile } from "./stats.ts";
import { benchWorkerClient } from "./worker-client.ts";

const { values } = parseArgs({
  options: {
    context: { type: "string", default: "4000" },
    tokens: { type: "string", default: "120" },
    reps: { type: "string", default: "3" },
  },
});
const context = Number(values.context);
const maxTokens = Number(values.tokens);
const stateDir = await mkdtemp(join(tmpdir(), "frontier-decode-"));
const worker = await startWorker({
  FRONTIER_MODEL_PATH: await ensureTestModel("mid"),
  FRONTIER_CONTEXT_SIZE: String(context + maxTokens + 256),
  FRONTIER_SEQUENCES: "1",
  FRONTIER_STATE_DIR: stateDir,
});
try {
  const client = benchWorkerClient(worker.grpcUrl);
  const text = "the agent reads files and calls tools. ".repeat(Math.ceil(context / 40)).slice(0, context);
  for (let rep = 0; rep < Number(values.reps); rep++) {
    const request = create(GenerateRequestSchema, {
      requestId: `decode-${rep}`,
      tenantId: "local",
      sessionId: newSessionId(),
      idKinds: { message: "msg", toolCall: "toolu" },
      conversation: { messages: [{ role: Role.USER, content: [{ block: { case: "text", value: { text } } }] }] },
      sampling: { maxTokens, temperature: 1, topP: 1, topK: 0 },
    });
    const gaps: number[] = [];
    let last = 0;
    let first = 0;
    let output = 0;
    let prompt = 0;
    for await (const event of client.generate(request)) {
      const now = performance.now();
      if (event.event.case === "textDelta" || event.event.case === "thinkingDelta") {
        if (first === 0) first = now;
        else gaps.push(now - last);
        last = now;
      }
      if (event.event.case === "stop") {
        output = event.event.value.usage?.outputTokens ?? 0;
        prompt = event.event.value.usage?.inputTokens ?? 0;
      }
    }
    const perToken = (last - first) / Math.max(output - 1, 1);
    process.stdout.write(
      `rep ${rep}: prompt ${prompt} tokens, ${output} output tokens, ${perToken.toFixed(1)} ms/token (first→last event / tokens), gap p50 ${percentile(gaps, 50).toFixed(1)} ms\n`,
    );
  }
} finally {
  await stopChild(worker.process);
  await rm(stateDir, { recursive: true, force: true });
}
