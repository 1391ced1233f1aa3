/**
 * What a tool-call grammar costs per decoded token: the same sequence (mid model, ~4,000 tokens of
 * context) decodes with no grammar and with the agent loop's kind of 12-tool call grammar,
 * alternating, and under the agent loop's scripted grammar (two fixed Bash calls).
 * `tsx bench/engine/grammar-decode.ts [--context 4000] [--tokens 120]`.
 */
import { parseArgs } from "node:util";
import { HERMES_TOOL_MARKUP } from "../../gpu-worker/chat/families/qwen/hermes.ts";
import { fixedToolCallsGrammar, toolCallGrammar } from "../../gpu-worker/chat/grammar/tool-grammar.ts";
import { SCRIPTED_BASH_COMMANDS } from "../../gpu-worker/generate/sampling-policy.ts";
import { createEngine } from "../../native/engine.ts";
import type { Token } from "../../native/engine-types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";

const { values } = parseArgs({
  options: { context: { type: "string", default: "4000" }, tokens: { type: "string", default: "120" } },
});
const context = Number(values.context);
const maxTokens = Number(values.tokens);
const engine = await createEngine({
  modelPath: await ensureTestModel("mid"),
  contextSize: context + maxTokens + 64,
  sequences: 1,
  threads: 1,
  gpu: false,
  flashAttention: false,
  batchSize: 512,
});
const NAMES = [
  "Read",
  "Grep",
  "Glob",
  "Bash",
  "Edit",
  "Write",
  "Task",
  "WebFetch",
  "TodoWrite",
  "LS",
  "MultiEdit",
  "NotebookEdit",
];
const schema = {
  type: "object",
  properties: {
    path: { type: "string", maxLength: 40 },
    pattern: { type: "string", maxLength: 40 },
    limit: { type: "integer" },
  },
  required: ["path"],
};
const tools = NAMES.map((name) => ({ name, inputSchemaJson: JSON.stringify(schema) }));
const grammar = toolCallGrammar(HERMES_TOOL_MARKUP, { tools, choice: "any", parallel: true, thinkingOpen: false });
// The benchmarks' agent loop: the test-only scripted policy's two fixed Bash calls.
const fixed = fixedToolCallsGrammar(
  HERMES_TOOL_MARKUP,
  SCRIPTED_BASH_COMMANDS.map((command) => ({ name: "Bash", argumentsJson: JSON.stringify({ command }) })),
  false,
);
try {
  const seq = await engine.acquireSequence();
  let prompt: Token[] = [];
  while (prompt.length < context)
    prompt = prompt.concat(engine.tokenize("the agent reads files and calls tools. ", { special: false }));
  await seq.append(prompt.slice(0, context));
  for (const [name, g] of [
    ["no grammar", undefined],
    ["tool grammar", grammar],
    ["fixed calls", fixed],
    ["no grammar", undefined],
    ["tool grammar", grammar],
    ["fixed calls", fixed],
  ] as const) {
    const t0 = performance.now();
    let n = 0;
    for await (const _ of seq.generate({ grammar: g, temperature: 1, topP: 1, topK: 0, minP: 0, seed: 1, maxTokens }))
      n++;
    process.stdout.write(
      `${name.padEnd(14)} ${n} tokens, ${((performance.now() - t0) / Math.max(n, 1)).toFixed(1)} ms/token\n`,
    );
    await seq.truncate(context);
  }
  seq.dispose();
} finally {
  await engine.dispose();
}
