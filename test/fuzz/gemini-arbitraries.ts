/**
 * fast-check arbitraries for Gemini API bodies (`generateContent`): mostly near-valid (so they reach
 * the worker: function declarations in both schema dialects, function calls and responses with and
 * without IDs, JSON output under a schema, thinking settings), with one field broken now and then
 * and the same hostile text and schemas as the other protocols' bodies. Output budgets stay tiny.
 */
import fc from "fast-check";
import { junk, mutated, schema, text, toolName, validToolName } from "./arbitraries.ts";

const geminiTypes = fc.constantFrom("STRING", "INTEGER", "NUMBER", "BOOLEAN", "ARRAY", "OBJECT", "string", "WHAT");

/** Gemini's OpenAPI-subset Schema, nullable and int64-as-string counts included. */
const openApiSchema: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ type: geminiTypes, nullable: fc.boolean() }, { requiredKeys: ["type"] }),
    fc.record({
      type: fc.constant("STRING"),
      enum: fc.array(text, { maxLength: 3 }),
      maxLength: fc.constantFrom("4", 4, "-1"),
    }),
    fc.record({ type: fc.constant("ARRAY"), items: tie("node"), maxItems: fc.constantFrom("2", 3, "x") }),
    fc.record({
      type: fc.constant("OBJECT"),
      properties: fc.dictionary(fc.string({ maxLength: 5 }), tie("node"), { maxKeys: 3 }),
      required: fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
      propertyOrdering: fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
    }),
    fc.record({ anyOf: fc.array(tie("node"), { maxLength: 3 }) }),
  ),
})).node;

const declarations = fc.uniqueArray(
  fc.oneof(
    fc.record({
      name: fc.oneof({ weight: 9, arbitrary: validToolName }, { weight: 1, arbitrary: toolName }),
      description: text,
      parameters: openApiSchema,
    }),
    fc.record({
      name: fc.oneof({ weight: 9, arbitrary: validToolName }, { weight: 1, arbitrary: toolName }),
      parametersJsonSchema: fc.oneof(
        fc.record({
          type: fc.constant("object"),
          properties: fc.dictionary(fc.string({ maxLength: 5 }), schema, { maxKeys: 3 }),
        }),
        schema,
      ),
    }),
  ),
  { maxLength: 3, selector: (d) => d.name },
);

const callId = fc.oneof(
  fc.constant(undefined),
  fc.string({ maxLength: 20 }),
  fc.constant("call_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
  fc.constant("run_shell_command__call_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
);

/** A user turn, sometimes a model turn with a call (and a thought) and the user's response to it. */
const contents = fc.oneof(
  text.map((t) => [{ role: "user", parts: [{ text: t }] }]),
  fc
    .tuple(text, text, validToolName, fc.jsonValue({ maxDepth: 2 }), callId, fc.boolean(), text, fc.boolean())
    .map(([first, thought, name, args, id, echo, output, signed]) => [
      { parts: [{ text: first }] },
      {
        role: "model",
        parts: [
          { text: thought, thought: true, ...(signed ? { thoughtSignature: "frontier.v1.AAAA" } : {}) },
          {
            functionCall: {
              name,
              args: typeof args === "object" && args !== null && !Array.isArray(args) ? args : {},
              ...(id ? { id } : {}),
            },
            thoughtSignature: "skip_thought_signature_validator",
          },
        ],
      },
      { role: "user", parts: [{ functionResponse: { name, response: { output }, ...(id && echo ? { id } : {}) } }] },
    ]),
);

const thinkingConfig = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ includeThoughts: fc.boolean(), thinkingBudget: fc.constantFrom(-1, 0, 16, 1024) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ includeThoughts: fc.boolean(), thinkingLevel: fc.constantFrom("MINIMAL", "LOW", "HIGH") }),
  },
  { weight: 1, arbitrary: fc.record({ thinkingBudget: fc.constant(8), thinkingLevel: fc.constant("LOW") }) },
);

const answerFormat = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  { weight: 2, arbitrary: schema.map((s) => ({ responseMimeType: "application/json", responseJsonSchema: s })) },
  { weight: 2, arbitrary: openApiSchema.map((s) => ({ responseMimeType: "application/json", responseSchema: s })) },
  { weight: 1, arbitrary: fc.constant({ responseMimeType: "application/json" }) },
  {
    weight: 1,
    arbitrary: fc.record({
      responseMimeType: fc.constantFrom("text/x.enum", "image/png"),
      responseSchema: openApiSchema,
    }),
  },
);

const generationConfig = fc
  .tuple(
    fc.record(
      {
        maxOutputTokens: fc.integer({ min: 1, max: 8 }),
        temperature: fc.double({ min: 0, max: 2, noNaN: true }),
        topK: fc.integer({ min: 0, max: 64 }),
        stopSequences: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
        thinkingConfig,
        candidateCount: fc.oneof({ weight: 19, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.constant(2) }),
      },
      { requiredKeys: ["maxOutputTokens"] },
    ),
    answerFormat,
  )
  .map(([config, answer]) => ({ ...config, ...answer }));

const callingConfig = (names: string[]) =>
  fc.oneof(
    fc.record({ mode: fc.constantFrom("AUTO", "NONE", "VALIDATED") }),
    fc.record({
      mode: fc.constant("ANY"),
      allowedFunctionNames: fc.subarray(names, { maxLength: Math.min(1, names.length) }),
    }),
    fc.record({ mode: fc.constantFrom("ANY", "AUTO", "SOMETIMES"), allowedFunctionNames: fc.subarray(names) }),
  );

const validGeminiBody: fc.Arbitrary<Record<string, unknown>> = declarations.chain((functions) =>
  fc.record(
    {
      contents,
      systemInstruction: text.map((t) => ({ parts: [{ text: t }] })),
      tools: fc.constant(functions.length === 0 ? [] : [{ functionDeclarations: functions }]),
      toolConfig: callingConfig(functions.map((f) => f.name)).map((c) =>
        c ? { functionCallingConfig: c } : undefined,
      ),
      generationConfig,
      safetySettings: junk,
    },
    { requiredKeys: ["contents", "generationConfig"] },
  ),
);

/** A Gemini API body: mostly valid, sometimes with one field broken (never the output budget). */
export const geminiBody: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: validGeminiBody },
  { weight: 3, arbitrary: mutated(validGeminiBody, ["contents", "tools", "toolConfig", "systemInstruction"]) },
  { weight: 1, arbitrary: junk },
);
