/**
 * Issue 33: forced calls sampled by the random tiny model hold the schema's bounds in every family:
 * tight string lengths (the XML families wrote up to 24 characters whatever `maxLength` said) and
 * integer and number ranges (ignored before: a `maximum: 400` integer came back as 556556).
 */
import { getLlama, type Llama, LlamaGrammarEvaluationState, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_FAMILIES } from "../../gpu-worker/chat/family-names.ts";
import { createChatFormat } from "../../gpu-worker/chat/select-format.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { ThinkingMode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { conversation, text, user } from "../unit/chat/fixtures.ts";
import { gbnfMatches } from "../unit/chat/gbnf-check.ts";

const SCHEMA = {
  type: "object",
  properties: {
    s: { type: "string", minLength: 2, maxLength: 3 },
    n: { type: "integer", minimum: 390, maximum: 400 },
    m: { type: "integer", exclusiveMinimum: -13, exclusiveMaximum: -9 },
    x: { type: "number", minimum: -1.5, maximum: -1.25 },
  },
  required: ["s", "n", "m", "x"],
};
const TOOLS = [{ name: "bounded", inputSchemaJson: JSON.stringify(SCHEMA) }];

let llama: Llama;
let model: LlamaModel;

beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
  model = await llama.loadModel({ modelPath: await ensureTestModel("tiny") });
});

afterAll(async () => {
  await model?.dispose();
  await llama?.dispose();
});

const formats = CHAT_FAMILIES.map((family) => createChatFormat(family, { chatTemplate: undefined }));
let seed = 100;

describe.each(formats)("$name: a sampled forced call holds the bounds", (format) => {
  it("string length, integer and number ranges", async () => {
    const rendered = format.render(conversation([user(text("Call it."))], { thinking: ThinkingMode.DISABLED }));
    const grammar = format.toolCallGrammar({
      tools: TOOLS,
      choice: { name: "bounded" },
      parallel: false,
      thinkingOpen: rendered.thinkingOpen,
    });
    const prompt = rendered.segments.flatMap((s) => model.tokenize(s.text, s.special));
    const context = await model.createContext({ contextSize: 2048, threads: 1 });
    try {
      for (let round = 0; round < 4; round++) {
        const sequence = context.getSequence();
        const out: Token[] = [];
        for await (const token of sequence.evaluate(prompt, {
          temperature: 1,
          seed: ++seed,
          grammarEvaluationState: new LlamaGrammarEvaluationState({
            model,
            grammar: await llama.createGrammar({ grammar }),
          }),
          yieldEogToken: true,
        })) {
          if (model.isEogToken(token) || out.length > 600) break;
          out.push(token);
        }
        await sequence.clearHistory();
        sequence.dispose();
        const sampled = model.detokenize(out);
        expect(gbnfMatches(grammar, sampled), sampled).toBe(true);
        const parser = format.createOutputParser({ thinkingOpen: rendered.thinkingOpen, tools: TOOLS });
        const calls = [...parser.push(sampled), ...parser.finish()].filter((e) => e.type === "tool_call_end");
        expect(calls.map((c) => [c.name, c.status])).toEqual([["bounded", "complete"]]);
        const args = JSON.parse(calls[0]?.argumentsJson ?? "") as { s: string; n: number; m: number; x: number };
        expect(args.s.length, sampled).toBeGreaterThanOrEqual(2);
        expect(args.s.length, sampled).toBeLessThanOrEqual(3);
        expect(Number.isInteger(args.n) && args.n >= 390 && args.n <= 400, sampled).toBe(true);
        expect([-12, -11, -10], sampled).toContain(args.m);
        expect(args.x >= -1.5 && args.x <= -1.25, sampled).toBe(true);
      }
    } finally {
      await context.dispose();
    }
  });
});
