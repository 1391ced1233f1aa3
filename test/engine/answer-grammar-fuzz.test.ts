/**
 * Hostile schemas for a response format (and Lark grammars for a custom tool) never yield a grammar
 * llama.cpp rejects: each one either builds a grammar the real parser accepts or is refused with a
 * SchemaGrammarError (the client's 400), in every family. Seeded and bounded (fast-check).
 */
import fc from "fast-check";
import { getLlama, type Llama } from "node-llama-cpp";
import { afterAll, beforeAll, expect, it } from "vitest";
import { CHAT_FAMILIES } from "../../gpu-worker/chat/family-names.ts";
import { SchemaGrammarError } from "../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { createChatFormat } from "../../gpu-worker/chat/select-format.ts";
import { schema } from "../fuzz/arbitraries.ts";
import { CUSTOM_SCHEMA } from "../unit/chat/codex-apply-patch.ts";

let llama: Llama;
beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
});
afterAll(async () => {
  await llama?.dispose();
});

const formats = CHAT_FAMILIES.map((family) => createChatFormat(family, { chatTemplate: undefined }));
const larkPiece = fc.constantFrom(
  '"a"',
  '"<b"',
  "/[^x]+/",
  "/(.*)/",
  "LF",
  "x",
  "(x | y)*",
  '[ "z" ]',
  "/\\d{1,3}/",
  "y+",
);

const outcomes = { built: 0, refused: 0 };

async function accepted(build: () => string): Promise<void> {
  let grammar: string;
  try {
    grammar = build();
  } catch (error) {
    if (error instanceof SchemaGrammarError) {
      outcomes.refused++;
      return;
    }
    throw error;
  }
  await llama.createGrammar({ grammar });
  outcomes.built++;
}

it("response-format schemas: a grammar llama.cpp parses, or a SchemaGrammarError", async () => {
  await fc.assert(
    fc.asyncProperty(schema, fc.boolean(), fc.nat(formats.length - 1), async (s, strict, i) => {
      const format = formats[i];
      if (format === undefined) return;
      await accepted(() =>
        format.answerGrammar({ schema: s, strict, field: "response_format.json_schema.schema", thinkingOpen: true }),
      );
    }),
    { seed: 20261201, numRuns: 150 },
  );
  expect(outcomes.built).toBeGreaterThan(50);
});

it("custom-tool Lark grammars: a grammar llama.cpp parses, or a SchemaGrammarError", async () => {
  const grammarSource = fc
    .tuple(fc.array(larkPiece, { minLength: 1, maxLength: 4 }), fc.array(larkPiece, { minLength: 1, maxLength: 3 }))
    .map(([start, x]) => `start: ${start.join(" ")}\nx: ${x.join(" ")} "q"\ny: "r"\n%import common.LF`);
  await fc.assert(
    fc.asyncProperty(grammarSource, fc.nat(formats.length - 1), async (definition, i) => {
      const format = formats[i];
      if (format === undefined) return;
      const tool = { name: "t", inputSchemaJson: CUSTOM_SCHEMA, inputGrammar: { syntax: "lark", definition } };
      await accepted(() =>
        format.toolCallGrammar({ tools: [tool], choice: "any", parallel: false, thinkingOpen: false }),
      );
    }),
    { seed: 20261201, numRuns: 150 },
  );
  // Both outcomes occur: grammars are built (and parsed) and refused (left recursion, '<' in XML).
  expect(outcomes.built).toBeGreaterThan(150);
  expect(outcomes.refused).toBeGreaterThan(0);
});
