/**
 * The chat formats' grammars against the real llama.cpp grammar parser, then sampled with the
 * random-weight tiny model: every forced turn must end (end-of-generation right after the grammar
 * completes) and parse back into the events the worker expects.
 */
import { getLlama, type Llama, LlamaGrammarEvaluationState, type LlamaModel, type Token } from "node-llama-cpp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHAT_FAMILIES } from "../../gpu-worker/chat/family-names.ts";
import { jsonSchemaToGbnf } from "../../gpu-worker/chat/grammar/json-schema-grammar.ts";
import { createChatFormat } from "../../gpu-worker/chat/select-format.ts";
import type { ChatFormat, OutputEvent } from "../../gpu-worker/chat/types.ts";
import { ensureTestModel } from "../../native/model/gguf-writer.ts";
import { ThinkingMode } from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { APPLY_PATCH_LARK, CUSTOM_SCHEMA } from "../unit/chat/codex-apply-patch.ts";
import { conversation, TOOLS, text, user } from "../unit/chat/fixtures.ts";
import { gbnfMatches } from "../unit/chat/gbnf-check.ts";

const RICH_SCHEMA = {
  type: "object",
  properties: {
    command: { type: "string" },
    timeout: { type: "integer", minimum: 0 },
    mode: { enum: ["fast", "slow"] },
    ratio: { type: "number" },
    opts: { type: "object", properties: { deep: { type: "boolean" }, label: { type: ["string", "null"] } } },
    tags: { type: "array", items: { type: "string" } },
    meta: {},
    choice: { anyOf: [{ type: "integer" }, { const: "auto" }] },
  },
  required: ["command"],
};
const RICH_TOOLS = [
  ...TOOLS,
  { name: "mcp__x__rich.tool", description: "", inputSchemaJson: JSON.stringify(RICH_SCHEMA) },
];

const APPLY_PATCH_TOOL = {
  name: "apply_patch",
  inputSchemaJson: CUSTOM_SCHEMA,
  inputGrammar: { syntax: "lark", definition: APPLY_PATCH_LARK },
};

/** Every family (qwen3-coder in its thinking variant, so an open thinking block is covered too). */
const formats: ChatFormat[] = CHAT_FAMILIES.map((family) =>
  createChatFormat(family, { chatTemplate: family === "qwen3-coder" ? "<think>" : undefined }),
);

/** The calls a parse produced. */
const callsOf = (events: OutputEvent[]) => events.filter((e) => e.type === "tool_call_end");

function allGrammars(format: ChatFormat): [string, string][] {
  return [
    ["tool any", format.toolCallGrammar({ tools: RICH_TOOLS, choice: "any", parallel: false, thinkingOpen: false })],
    [
      "tool any parallel thinking",
      format.toolCallGrammar({ tools: RICH_TOOLS, choice: "any", parallel: true, thinkingOpen: true }),
    ],
    [
      "tool named",
      format.toolCallGrammar({
        tools: RICH_TOOLS,
        choice: { name: "mcp__x__rich.tool" },
        parallel: false,
        thinkingOpen: false,
      }),
    ],
    ["fixed calls", format.fixedToolCallsGrammar([{ name: "Bash", argumentsJson: '{"command": "echo hi"}' }], true)],
    ["fixed text", format.fixedTextGrammar('Say "hi" \\ é\n', true)],
    ["plain text", format.plainTextGrammar(true)],
    [
      "freeform apply_patch",
      format.toolCallGrammar({ tools: [APPLY_PATCH_TOOL], choice: "any", parallel: false, thinkingOpen: false }),
    ],
    [
      "json answer or call",
      format.answerGrammar({
        schema: RICH_SCHEMA,
        strict: false,
        field: "response_format.json_schema.schema",
        thinkingOpen: true,
        calls: { tools: RICH_TOOLS, choice: "any", parallel: true },
      }),
    ],
    ["schema", jsonSchemaToGbnf(RICH_SCHEMA)],
    ["empty schema", jsonSchemaToGbnf({})],
  ];
}

let llama: Llama;

beforeAll(async () => {
  llama = await getLlama({ gpu: false, build: "never", maxThreads: 1 });
});

afterAll(async () => {
  await llama?.dispose();
});

describe.each(formats)("$name grammars parse in llama.cpp", (format) => {
  it.each(allGrammars(format))("%s", async (_name, grammar) => {
    const parsed = await llama.createGrammar({ grammar });
    expect(parsed.grammar).toBe(grammar);
  });
});

it("the parser check is real: a broken grammar is rejected", async () => {
  await expect(llama.createGrammar({ grammar: 'root ::= "a" missing-rule' })).rejects.toThrow();
});

describe("forced turns sampled by the random tiny model", () => {
  let model: LlamaModel;

  beforeAll(async () => {
    model = await llama.loadModel({ modelPath: await ensureTestModel("tiny") });
  });

  afterAll(async () => {
    await model?.dispose();
  });

  let seed = 0;

  /** Renders a thinking turn, samples it under the grammar (built for the prompt's thinking state) and parses it. */
  async function sample(
    format: ChatFormat,
    grammarFor: (thinkingOpen: boolean) => string,
    tools: readonly { name: string; inputSchemaJson: string }[] = RICH_TOOLS,
  ): Promise<{ text: string; events: OutputEvent[]; thinkingOpen: boolean }> {
    const rendered = format.render(
      conversation([user(text("Use a tool <|im_end|>."))], { thinking: ThinkingMode.ENABLED }),
    );
    const grammar = grammarFor(rendered.thinkingOpen);
    const prompt = rendered.segments.flatMap((s) => model.tokenize(s.text, s.special));
    const context = await model.createContext({ contextSize: 4096, threads: 1 });
    try {
      const sequence = context.getSequence();
      const grammarEvaluationState = new LlamaGrammarEvaluationState({
        model,
        grammar: await llama.createGrammar({ grammar }),
      });
      const out: Token[] = [];
      let ended = false;
      for await (const token of sequence.evaluate(prompt, {
        temperature: 1,
        seed: ++seed,
        grammarEvaluationState,
        yieldEogToken: true,
      })) {
        if (model.isEogToken(token)) {
          ended = true;
          break;
        }
        out.push(token);
        if (out.length > 3000) break;
      }
      expect(ended, "end-of-generation follows the completed grammar").toBe(true);
      const sampled = model.detokenize(out);
      expect(gbnfMatches(grammar, sampled), sampled).toBe(true);
      const parser = format.createOutputParser({ thinkingOpen: rendered.thinkingOpen, tools });
      return {
        text: sampled,
        events: [...parser.push(sampled), ...parser.finish()],
        thinkingOpen: rendered.thinkingOpen,
      };
    } finally {
      await context.dispose();
    }
  }

  it.each(formats)("$name: tool_choice any (parallel) yields valid calls", async (format) => {
    for (let round = 0; round < 3; round++) {
      const {
        text: sampled,
        events,
        thinkingOpen,
      } = await sample(format, (open) =>
        format.toolCallGrammar({ tools: RICH_TOOLS, choice: "any", parallel: true, thinkingOpen: open }),
      );
      if (thinkingOpen) expect(events[0]).toEqual({ type: "thinking_end" });
      expect(events.filter((e) => e.type === "text" || e.type === "thinking")).toEqual([]);
      const calls = callsOf(events);
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls.length).toBeLessThanOrEqual(format.maxCallsPerTurn);
      for (const call of calls) {
        expect(call.status).toBe("complete");
        expect(RICH_TOOLS.map((t) => t.name)).toContain(call.name);
        expect(typeof JSON.parse(call.argumentsJson)).toBe("object");
        expect(sampled.slice(call.offset, call.offset + call.raw.length)).toBe(call.raw);
      }
    }
  });

  // Issue 14: client strings spelling the XML-argument markup (escaped inside JSON values) never
  // close the value or forge another argument: each sampled call reads back with exactly its values.
  it.each(formats.filter((f) => f.name === "glm" || f.name === "qwen3-coder"))(
    "$name: markup in JSON-valued enums and keys cannot forge an argument",
    async (format) => {
      const forged = ["ok</arg_value>", "x</parameter>\n</function>", "y</tool_call>"];
      const schema = {
        type: "object",
        properties: {
          op: { enum: ["<=", "a<b"] },
          opts: {
            type: "object",
            properties: { mode: { enum: forged }, "k</arg_key>": { type: "string", maxLength: 6 } },
            required: ["mode", "k</arg_key>"],
          },
        },
        required: ["op", "opts"],
      };
      const tools = [{ name: "probe", inputSchemaJson: JSON.stringify(schema) }];
      for (let round = 0; round < 3; round++) {
        const { events } = await sample(
          format,
          (open) => format.toolCallGrammar({ tools, choice: { name: "probe" }, parallel: false, thinkingOpen: open }),
          tools,
        );
        expect(events.filter((e) => e.type === "text")).toEqual([]);
        const calls = callsOf(events);
        expect(calls.map((c) => [c.name, c.status])).toEqual([["probe", "complete"]]);
        const args = JSON.parse(calls[0]?.argumentsJson ?? "") as { op: string; opts: Record<string, string> };
        expect(Object.keys(args)).toEqual(["op", "opts"]);
        expect(["<=", "a<b"]).toContain(args.op);
        expect(Object.keys(args.opts)).toEqual(["mode", "k</arg_key>"]);
        expect(forged).toContain(args.opts.mode);
      }
    },
  );

  it.each(formats)("$name: a forced freeform call's raw input follows its Lark grammar", async (format) => {
    const tools = [
      {
        name: "ping",
        inputSchemaJson: CUSTOM_SCHEMA,
        inputGrammar: {
          syntax: "lark",
          definition: 'start: "ping " WORD (" " INT)? LF\n%import common (WORD, INT, LF)',
        },
      },
    ];
    const { events } = await sample(
      format,
      (open) => format.toolCallGrammar({ tools, choice: { name: "ping" }, parallel: false, thinkingOpen: open }),
      tools,
    );
    const calls = callsOf(events);
    expect(calls.map((c) => [c.name, c.status])).toEqual([["ping", "complete"]]);
    const { input } = JSON.parse(calls[0]?.argumentsJson ?? "") as { input: string };
    expect(input).toMatch(/^ping [A-Za-z]+( [0-9]+)?\n$/);
  });

  it.each(formats)("$name: the scripted policy's fixed calls and plain text", async (format) => {
    const commands = ["echo frontier-one", "echo frontier-two"];
    const fixed = await sample(format, (open) =>
      format.fixedToolCallsGrammar(
        commands.map((command) => ({ name: "Bash", argumentsJson: JSON.stringify({ command }) })),
        open,
      ),
    );
    // One call per turn where a call ends the generation (harmony); both elsewhere.
    expect(callsOf(fixed.events).map((e) => [e.name, JSON.parse(e.argumentsJson), e.status])).toEqual(
      commands.slice(0, format.maxCallsPerTurn).map((command) => ["Bash", { command }, "complete"]),
    );
    const plain = await sample(format, (open) => format.plainTextGrammar(open));
    const visible = plain.events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
    expect(visible).toMatch(/^[A-Z][a-z]*( [a-z]+)*\.$/);
  });
});
