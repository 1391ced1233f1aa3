/**
 * Measure prefill and decode throughput of the engine on a generated model:
 * `tsx bench/engine/engine-bench.ts --size tiny|mid [--prompt 1024] [--decode 128] [--threads 1] [--flash] [--gpu]`.
 */
import { parseArgs } from "node:util";
import { createEngine } from "../../native/engine.ts";
import type { Token } from "../../native/engine-types.ts";
import { describeEngineBuild } from "../../native/engine-types.ts";
import { ensureTestModel, TEST_MODEL_SPECS, type TestModelSize } from "../../native/model/gguf-writer.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "tiny" },
    prompt: { type: "string", default: "1024" },
    decode: { type: "string", default: "128" },
    threads: { type: "string", default: "1" },
    flash: { type: "boolean", default: false },
    gpu: { type: "boolean", default: false },
  },
});
const size = values.size ?? "tiny";
if (!Object.hasOwn(TEST_MODEL_SPECS, size))
  throw new Error(`--size must be one of ${Object.keys(TEST_MODEL_SPECS).join(", ")}`);
const promptTokens = Number(values.prompt);
const decodeTokens = Number(values.decode);

const engine = await createEngine({
  modelPath: await ensureTestModel(size as TestModelSize),
  contextSize: Math.max(2048, promptTokens + decodeTokens + 16),
  sequences: 1,
  threads: Number(values.threads),
  gpu: values.gpu === true ? "auto" : false,
  flashAttention: values.flash === true,
  batchSize: 512,
});
try {
  const seq = await engine.acquireSequence();
  const text = "The quick brown fox jumps over the lazy dog while the engine measures tokens. ";
  let prompt: Token[] = [];
  while (prompt.length < promptTokens) prompt = prompt.concat(engine.tokenize(text, { special: false }));
  prompt = prompt.slice(0, promptTokens);
  let t0 = performance.now();
  await seq.append(prompt);
  const prefillMs = performance.now() - t0;
  t0 = performance.now();
  let n = 0;
  const eog = new Set(engine.model.endOfGenerationTokens);
  // Ban nothing, but keep going past end-of-generation so the decode count is exact.
  for await (const t of seq.generate({
    temperature: 0,
    topP: 1,
    topK: 0,
    minP: 0,
    seed: 1,
    grammar: undefined,
    maxTokens: decodeTokens,
  })) {
    n++;
    if (eog.has(t)) break;
  }
  const decodeMs = performance.now() - t0;
  const rate = (count: number, ms: number): string => `${((count / ms) * 1000).toFixed(0)} tok/s`;
  console.log(
    `${engine.model.name} threads=${values.threads} flash=${values.flash}: prefill ${prompt.length} tokens ${prefillMs.toFixed(0)} ms (${rate(prompt.length, prefillMs)}); ` +
      `decode ${n} tokens at depth ${prompt.length} ${decodeMs.toFixed(0)} ms (${rate(n, decodeMs)}); ` +
      describeEngineBuild(engine.model.build),
  );
  seq.dispose();
} finally {
  await engine.dispose();
}
