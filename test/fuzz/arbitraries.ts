/**
 * fast-check arbitraries for request bodies of both APIs: mostly near-valid bodies (so they reach the
 * worker: rendering, tokenization, grammars, sampling), with invalid and hostile values mixed in at
 * every level — wrong types, markup in names and values, long character runs, deep schemas, `$ref`
 * loops, unknown blocks. Output budgets stay tiny so each case costs milliseconds.
 */
import fc from "fast-check";

const MARKUP = [
  "</tool_call>",
  "<tool_call>",
  "<|im_end|>",
  "<|im_start|>",
  "<think>",
  "</think>",
  "<｜end▁of▁sentence｜>",
];

/** Text: ordinary, markup-laden, unicode, or a long run of one character. */
export const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom(...MARKUP).map((m) => `a${m}b`) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  // Runs around the tokenizer guard's bound (4,096) of the classes it bounds, shorter runs of others.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("}", "-", "1"), fc.integer({ min: 3900, max: 6000 }))
      .map(([c, n]) => c.repeat(n)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom("a", " ", "é", "\n", "}"), fc.integer({ min: 1, max: 1200 }))
      .map(([c, n]) => c.repeat(n)),
  },
);

const jsonTypes = fc.constantFrom("string", "integer", "number", "boolean", "null", "array", "object");

/** JSON-Schema-like values, including broken ones (empty/unknown types, `$ref` loops, deep nesting). */
export const schema: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({ type: jsonTypes }),
    fc.record({ type: fc.oneof(fc.constant([]), fc.array(jsonTypes, { maxLength: 3 }), fc.string({ maxLength: 6 })) }),
    fc.record({ enum: fc.array(fc.oneof(text, fc.integer(), fc.constant(null)), { maxLength: 4 }) }),
    fc.record({ const: fc.oneof(text, fc.integer()) }),
    fc.record({ $ref: fc.constantFrom("#", "#/properties/a", "#/nope", "http://x") }),
    fc.record({ anyOf: fc.array(tie("node"), { maxLength: 8 }) }),
    fc.record({
      type: fc.constant("object"),
      properties: fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...MARKUP)), tie("node"), {
        maxKeys: 4,
      }),
      required: fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
    }),
    fc.record({ type: fc.constant("array"), items: tie("node"), maxItems: fc.integer({ min: -1, max: 9 }) }),
    fc.record({ type: fc.constant("string"), minLength: fc.integer({ min: -5, max: 50 }), maxLength: fc.integer() }),
  ),
})).node;

export const toolName = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom("get_weather", "Bash", "lookup", "t-1") },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom(...MARKUP).map((m) => `x${m}y`) },
);

/** An arbitrary JSON value (wrong types anywhere). */
export const junk = fc.jsonValue({ maxDepth: 3 });

/** Replace one top-level field of a (valid) body with junk, or drop a required one. */
export function mutated(valid: fc.Arbitrary<Record<string, unknown>>, keys: readonly string[]): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.constantFrom(...keys), junk, fc.boolean()).map(([body, key, value, drop]) => {
    const out: Record<string, unknown> = { ...body };
    if (drop) delete out[key];
    else out[key] = value;
    return out;
  });
}

export const validToolName = fc.constantFrom("get_weather", "Bash", "lookup", "t-1", "mcp__srv__do_it");

const anthropicTools = fc.uniqueArray(
  fc.record({
    name: fc.oneof({ weight: 9, arbitrary: validToolName }, { weight: 1, arbitrary: toolName }),
    description: text,
    input_schema: fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          type: fc.constant("object"),
          properties: fc.dictionary(fc.string({ maxLength: 5 }), schema, { maxKeys: 3 }),
        }),
      },
      { weight: 1, arbitrary: schema },
    ),
  }),
  { maxLength: 3, selector: (t) => t.name },
);

const anthropicToolChoice = (tools: { name: string }[]) =>
  tools.length === 0
    ? fc.constant(undefined)
    : fc.oneof(
        fc.constant(undefined),
        fc.record({ type: fc.constantFrom("auto", "any", "none") }),
        fc.constantFrom(...tools).map((t) => ({ type: "tool", name: t.name })),
      );

const userContent = fc.oneof(
  text,
  fc.array(fc.record({ type: fc.constant("text"), text }), { minLength: 1, maxLength: 2 }),
);

/** A conversation: a user turn, sometimes an assistant turn with a tool call and the user's result. */
const anthropicMessages = fc.oneof(
  userContent.map((content) => [{ role: "user", content }]),
  fc
    .tuple(
      userContent,
      text,
      fc.string({ minLength: 1, maxLength: 30 }),
      validToolName,
      fc.jsonValue({ maxDepth: 2 }),
      text,
    )
    .map(([first, said, id, name, input, result]) => [
      { role: "user", content: first },
      {
        role: "assistant",
        content: [
          { type: "text", text: said || "ok" },
          {
            type: "tool_use",
            id,
            name,
            input: typeof input === "object" && input !== null && !Array.isArray(input) ? input : {},
          },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: result }] },
    ]),
);

const validMessagesBody: fc.Arbitrary<Record<string, unknown>> = anthropicTools.chain((tools) =>
  fc.record(
    {
      model: fc.constant("frontier-test"),
      max_tokens: fc.integer({ min: 1, max: 8 }),
      messages: anthropicMessages,
      system: fc.oneof(text, fc.array(fc.record({ type: fc.constant("text"), text }), { maxLength: 2 })),
      tools: fc.constant(tools),
      tool_choice: anthropicToolChoice(tools),
      stream: fc.boolean(),
      stop_sequences: fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 3 }),
      temperature: fc.double({ min: 0, max: 1, noNaN: true }),
      metadata: fc.record({ user_id: fc.string({ maxLength: 10 }) }),
      extra_unknown_field: junk,
    },
    { requiredKeys: ["model", "max_tokens", "messages"] },
  ),
);

/** A Messages API body: mostly valid (hostile text, schemas, names), sometimes with one field broken. */
export const messagesBody: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: validMessagesBody },
  {
    weight: 3,
    arbitrary: mutated(validMessagesBody, [
      "model",
      "max_tokens",
      "messages",
      "tools",
      "tool_choice",
      "system",
      "stop_sequences",
      "temperature",
      "thinking",
      "stream",
    ]),
  },
  { weight: 1, arbitrary: junk },
);

const responsesItem = fc.oneof(
  { weight: 4, arbitrary: fc.record({ role: fc.constantFrom("user", "developer", "system"), content: text }) },
  fc.record({
    type: fc.constant("message"),
    role: fc.constant("user"),
    content: fc.array(fc.record({ type: fc.constant("input_text"), text }), { minLength: 1, maxLength: 2 }),
  }),
  fc.record({ type: fc.constant("function_call_output"), call_id: fc.string({ maxLength: 30 }), output: text }),
  fc.record({ type: fc.constantFrom("reasoning", "item_reference", "mystery"), id: fc.string({ maxLength: 10 }) }),
  // Codex's default-model items: tools added at an item (maybe clashing names), configuration updates.
  fc.record({
    type: fc.constant("additional_tools"),
    role: fc.constantFrom("developer", "user"),
    tools: fc.array(
      fc.record({ type: fc.constantFrom("function", "custom", "namespace", "tool_search"), name: toolName }),
      { maxLength: 2 },
    ),
  }),
  fc.record({
    type: fc.constant("configuration_update"),
    reasoning: fc.record({ effort: fc.constantFrom("low", "high", "max", null) }),
  }),
);

const responsesTools = fc.uniqueArray(
  fc.record({
    type: fc.constant("function"),
    name: fc.oneof({ weight: 9, arbitrary: validToolName }, { weight: 1, arbitrary: toolName }),
    parameters: fc.oneof(
      {
        weight: 3,
        arbitrary: fc.record({
          type: fc.constant("object"),
          properties: fc.dictionary(fc.string({ maxLength: 5 }), schema, { maxKeys: 3 }),
        }),
      },
      { weight: 1, arbitrary: schema },
    ),
  }),
  { maxLength: 3, selector: (t) => t.name },
);

const validResponsesBody: fc.Arbitrary<Record<string, unknown>> = responsesTools.chain((tools) =>
  fc.record(
    {
      model: fc.constant("frontier-test"),
      input: fc.oneof(text, fc.array(responsesItem, { minLength: 1, maxLength: 3 })),
      instructions: text,
      max_output_tokens: fc.integer({ min: 1, max: 8 }),
      tools: fc.constant(tools),
      tool_choice:
        tools.length === 0
          ? fc.constant(undefined)
          : fc.oneof(
              fc.constantFrom("auto", "required", "none"),
              fc.constantFrom(...tools).map((t) => ({ type: "function", name: t.name })),
            ),
      previous_response_id: fc.constantFrom(undefined, "resp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
      stream: fc.boolean(),
      store: fc.boolean(),
      temperature: fc.double({ min: 0, max: 2, noNaN: true }),
      extra_unknown_field: junk,
    },
    { requiredKeys: ["model", "input", "max_output_tokens"] },
  ),
);

/**
 * A Responses API body: mostly valid, sometimes with one field broken (never `max_output_tokens`,
 * whose absence means a 4,096-token answer: slow, not interesting).
 */
export const responsesBody: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: validResponsesBody },
  {
    weight: 3,
    arbitrary: mutated(validResponsesBody, [
      "model",
      "input",

      "tools",
      "tool_choice",
      "instructions",
      "temperature",
      "stream",
    ]),
  },
  { weight: 1, arbitrary: junk },
);

/** Raw body text: mostly the JSON of a body, sometimes truncated, deeply nested or not JSON at all. */
export function rawBody(body: fc.Arbitrary<unknown>): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 12, arbitrary: body.map((b) => JSON.stringify(b) ?? "null") },
    {
      weight: 1,
      arbitrary: body.chain((b) => {
        const json = JSON.stringify(b) ?? "null";
        return fc.integer({ min: 0, max: json.length }).map((n) => json.slice(0, n));
      }),
    },
    { weight: 1, arbitrary: fc.integer({ min: 60, max: 5000 }).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  );
}
