/**
 * Worst cases of forced-call grammar construction under the schema node budget
 * (json-schema-grammar.ts JSON_GRAMMAR_LIMITS): for each adversarial tool set, the time to build the
 * GBNF (JS), to compile it and sample the first tokens with it (llama.cpp), and the longest
 * event-loop stall meanwhile. `tsx bench/engine/grammar-worst.ts [--tokens 8]`.
 */

import { parseArgs } from "node:util";
import { ChatMlFormat } from "../../gpu-worker/chat/families/qwen/chatml.ts";
import { JSON_GRAMMAR_LIMITS, SchemaGrammarError } from "../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import type { GrammarTool } from "../../gpu-worker/chat/types.ts";
import { createEngine } from "../../native/engine.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { startStallMeter } from "./stall-meter.ts";

const { values } = parseArgs({ options: { tokens: { type: "string", default: "8" } } });
const maxTokens = Number(values.tokens);

/** An anyOf tree of `arity` alternatives, `depth` levels: distinct rules, one language (ambiguous). */
function ambiguousTree(arity: number, depth: number): unknown {
  if (depth === 0) return { type: "integer" };
  return { anyOf: Array.from({ length: arity }, () => ambiguousTree(arity, depth - 1)) };
}
/** An object of `n` string properties, the first `required` of them required. */
const wide = (n: number, required = 0) => ({
  type: "object",
  properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { type: "string" }])),
  ...(required > 0 ? { required: Array.from({ length: required }, (_, i) => `p${i}`) } : {}),
});
const optionalMax = JSON_GRAMMAR_LIMITS.maxOptionalProperties;
const tool = (name: string, schema: unknown): GrammarTool => ({ name, inputSchemaJson: JSON.stringify(schema) });
const perTool = JSON_GRAMMAR_LIMITS.maxSchemaNodes;
const toolsPerGrammar = Math.floor(JSON_GRAMMAR_LIMITS.maxGrammarNodes / perTool);

const CASES: Record<string, GrammarTool[]> = {
  "refused: anyOf [$ref #] x7 (issue 14 reproducer)": [tool("t", { anyOf: Array(7).fill({ $ref: "#" }) })],
  "ambiguous anyOf tree 7^4 (2,801 nodes)": [tool("t", ambiguousTree(7, 4))],
  "ambiguous anyOf tree 4^6 (5,461 nodes: refused)": [tool("t", ambiguousTree(4, 6))],
  "ambiguous anyOf tree 2^11 (4,095 nodes)": [tool("t", ambiguousTree(2, 11))],
  "one object of 256 optional properties": [tool("t", wide(256))],
  "one object of 1024 optional properties (refused)": [tool("t", wide(1024))],
  [`one object of ${perTool - 2} required properties`]: [tool("t", wide(perTool - 2, perTool - 2))],
  [`one object of ${perTool - 2} properties, ${optionalMax} optional`]: [
    tool("t", wide(perTool - 2, perTool - 2 - optionalMax)),
  ],
  [`${toolsPerGrammar} tools x ${perTool - 2} properties, ${optionalMax} optional (grammar budget)`]: Array.from(
    { length: toolsPerGrammar },
    (_, i) => tool(`t${i}`, { ...wide(perTool - 2, perTool - 2 - optionalMax), description: `tool ${i}` }),
  ),
  [`${toolsPerGrammar} distinct tools x ${perTool - 2} properties, ${optionalMax} optional`]: Array.from(
    { length: toolsPerGrammar },
    (_, i) => {
      const schema = wide(perTool - 2, perTool - 2 - optionalMax);
      const properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [`${k}t${i}`, v]));
      return tool(`t${i}`, { ...schema, properties, required: schema.required?.map((k) => `${k}t${i}`) });
    },
  ),
  [`${toolsPerGrammar} ambiguous trees 2^11`]: Array.from({ length: toolsPerGrammar }, (_, i) =>
    tool(`t${i}`, ambiguousTree(2, 11)),
  ),
};

const engine = await createEngine({
  modelPath: await ensureTestModel("tiny"),
  contextSize: 4096,
  sequences: 1,
  threads: 1,
  gpu: false,
  flashAttention: false,
  batchSize: 512,
});
const format = new ChatMlFormat();
const rows: Record<string, unknown>[] = [];
try {
  for (const [name, tools] of Object.entries(CASES)) {
    const meter = startStallMeter();
    const t0 = performance.now();
    let grammar: string;
    try {
      grammar = format.toolCallGrammar({ tools, choice: "any", parallel: true, thinkingOpen: false });
    } catch (error) {
      if (!(error instanceof SchemaGrammarError)) throw error;
      meter.stop();
      rows.push({ name, refusedMs: Math.round(performance.now() - t0), error: error.message.slice(0, 80) });
      continue;
    }
    const buildMs = performance.now() - t0;
    const seq = await engine.acquireSequence();
    const t1 = performance.now();
    let sampled = 0;
    try {
      await seq.append(engine.tokenize("<|im_start|>assistant\n", { special: true }));
      for await (const _ of seq.generate({ temperature: 0, topP: 1, topK: 0, minP: 0, seed: 1, grammar, maxTokens })) {
        sampled++;
      }
    } finally {
      seq.dispose();
    }
    const stall = meter.stop();
    rows.push({
      name,
      gbnfChars: grammar.length,
      buildMs: Math.round(buildMs),
      compileAndSampleMs: Math.round(performance.now() - t1),
      sampled,
      maxEventLoopStallMs: Math.round(stall),
    });
  }
} finally {
  await engine.dispose();
}
console.log(JSON.stringify(rows, null, 2));
