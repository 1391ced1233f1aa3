/**
 * The event-loop stall while the largest prompt the worker accepts tokenizes, and the latency of a
 * small concurrent turn meanwhile, with the engine's tokenizer thread on and off:
 * `tsx bench/engine/tokenize-stall.ts [--family qwen3] [--context 32768] [--turns 5]`.
 * "Largest accepted" is the byte bound the worker checks before tokenizing (run-turn.ts
 * checkPromptBytes): just under contextSize x maxTokenBytes bytes of plain text.
 */

import { parseArgs } from "node:util";
import { createEngine } from "../../native/engine.ts";
import type { Engine } from "../../native/engine-types.ts";
import { isFamilyName } from "../../native/model/families.ts";
import { ensureFamilyModel } from "../../native/model/family-model.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { filler } from "../text.ts";
import { startStallMeter } from "./stall-meter.ts";

const { values } = parseArgs({
  options: {
    family: { type: "string" },
    context: { type: "string", default: "32768" },
    turns: { type: "string", default: "5" },
  },
});
const family = values.family;
if (family !== undefined && !isFamilyName(family)) throw new Error(`unknown --family ${family}`);
const modelPath = family === undefined ? await ensureTestModel("tiny") : await ensureFamilyModel(family, "tiny");
const contextSize = Number(values.context);
const turns = Number(values.turns);

/** One small turn of another session: prefill a short prompt and sample 4 tokens. */
async function smallTurn(engine: Engine): Promise<number> {
  const started = performance.now();
  const seq = await engine.acquireSequence();
  try {
    await seq.append(engine.tokenize("a small turn of another session", { special: false }));
    for await (const _ of seq.generate({
      temperature: 0,
      topP: 1,
      topK: 0,
      minP: 0,
      seed: 1,
      grammar: undefined,
      maxTokens: 4,
    })) {
      // drain
    }
  } finally {
    seq.dispose();
  }
  return performance.now() - started;
}

async function measure(tokenizerThread: boolean) {
  const engine = await createEngine({
    modelPath,
    contextSize,
    sequences: 2,
    threads: 1,
    gpu: false,
    flashAttention: false,
    batchSize: 512,
    tokenizerThread,
  });
  try {
    const bytes = contextSize * engine.maxTokenBytes - 1;
    let prompt = filler(Math.ceil(bytes / 5));
    while (Buffer.byteLength(prompt) < bytes) prompt += prompt;
    prompt = prompt.slice(0, bytes);
    const alone: number[] = [];
    for (let i = 0; i < turns; i++) alone.push(await smallTurn(engine));
    const meter = startStallMeter();
    let done = false;
    const during: number[] = [];
    // Another session's small turn is in flight when the long prompt arrives, and more keep coming.
    const others = (async () => {
      do during.push(await smallTurn(engine));
      while (!done);
    })();
    const started = performance.now();
    const tokenized = engine.tokenizeAsync(prompt, { special: false }).finally(() => {
      done = true;
    });
    const tokens = (await tokenized).length;
    const tokenizeMs = performance.now() - started;
    await others;
    const stall = meter.stop();
    return {
      tokenizerThread,
      promptBytes: bytes,
      promptTokens: tokens,
      tokenizeMs: Math.round(tokenizeMs),
      maxEventLoopStallMs: Math.round(stall),
      smallTurnAloneMedianMs: Math.round(alone.sort((a, b) => a - b)[Math.floor(alone.length / 2)] ?? 0),
      smallTurnsDuring: during.length,
      smallTurnDuringFirstMs: Math.round(during[0] ?? 0),
      smallTurnDuringMaxMs: Math.round(Math.max(...during)),
    };
  } finally {
    await engine.dispose();
  }
}

const rows = [await measure(false), await measure(true)];
console.log(JSON.stringify({ model: family ?? "byte-level tiny", contextSize, rows }, null, 2));
