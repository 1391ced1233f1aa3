/**
 * sampleTurn with each family's parser: a call reaches the client as toolCallStart → several
 * toolCallDelta → toolCallEnd while it is sampled, and the stop reason follows the call's status.
 * The "engine" here replays fixed text chunks as tokens: this is about sample-turn's own logic.
 */
import { describe, expect, it } from "vitest";
import { HarmonyFormat } from "../../../gpu-worker/chat/families/harmony/harmony.ts";
import { ChatMlFormat } from "../../../gpu-worker/chat/families/qwen/chatml.ts";
import { Qwen3Format } from "../../../gpu-worker/chat/families/qwen/qwen3.ts";
import { Qwen3CoderFormat } from "../../../gpu-worker/chat/families/qwen/qwen3-coder.ts";
import type { ChatFormat } from "../../../gpu-worker/chat/types.ts";
import { sampleTurn } from "../../../gpu-worker/generate/sample-turn.ts";
import type { EngineSequence } from "../../../native/engine-types.ts";
import { type GenerateEvent, StopReason } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { TOOLS } from "./fixtures.ts";

const EOG = 0;

/** A sequence that "samples" one token per chunk (token i+1 decodes to chunks[i]), then EOG unless cut. */
function replay(
  chunks: readonly string[],
  endsWithEog: boolean,
): { sequence: EngineSequence; bytes: (t: number) => Uint8Array } {
  const encoder = new TextEncoder();
  const unused = (): never => {
    throw new Error("not used by sampleTurn");
  };
  const sequence: EngineSequence = {
    index: 0,
    tokens: [],
    truncate: unused,
    append: unused,
    saveState: unused,
    loadState: unused,
    dispose: unused,
    async *generate(options) {
      for (let i = 0; i < chunks.length && i < options.maxTokens; i++) yield i + 1;
      if (endsWithEog && chunks.length < options.maxTokens) yield EOG;
    },
  };
  return { sequence, bytes: (t) => encoder.encode(chunks[t - 1] ?? "") };
}

async function run(
  format: ChatFormat,
  output: string,
  options: { maxTokens?: number; eog?: boolean; thinkingOpen?: boolean } = {},
) {
  const chunks = output.match(/[\s\S]{1,4}/g) ?? [];
  const { sequence, bytes } = replay(chunks, options.eog ?? true);
  let ids = 0;
  const events: GenerateEvent["event"][] = [];
  const generator = sampleTurn({
    sequence,
    parser: format.createOutputParser({ thinkingOpen: options.thinkingOpen ?? false, tools: TOOLS }),
    thinkingOpen: options.thinkingOpen ?? false,
    sampling: { temperature: 1, topP: 1, topK: 0, minP: 0, seed: undefined, grammar: undefined },
    maxTokens: options.maxTokens ?? 10_000,
    stopSequences: [],
    signal: new AbortController().signal,
    tokenBytes: bytes,
    isEndOfGeneration: (t) => t === EOG,
    mintToolUseId: async () => `toolu_${++ids}`,
    signThinking: async () => "sig",
  });
  for (;;) {
    const next = await generator.next();
    if (next.done) return { events, turn: next.value };
    events.push(next.value.event);
  }
}

const HERMES = '<tool_call>\n{"name": "Bash", "arguments": {"command": "echo hello world"}}\n</tool_call>';
const CODER =
  "<tool_call>\n<function=Bash>\n<parameter=command>\necho hello world\n</parameter>\n</function>\n</tool_call>";
const HARMONY = ' to=functions.Bash<|channel|>commentary json<|message|>{"command": "echo hello world"}';

describe.each([
  ["chatml", new ChatMlFormat(), HERMES],
  ["qwen3-coder", new Qwen3CoderFormat(), CODER],
  ["harmony", new HarmonyFormat(), HARMONY],
] as const)("%s", (_name, format, call) => {
  it("streams a call as start, several argument deltas, end; the turn stops for tool use", async () => {
    const { events, turn } = await run(format, call);
    const cases = events.map((e) => e.case);
    expect(cases[0]).toBe("toolCallStart");
    expect(cases.at(-1)).toBe("toolCallEnd");
    const deltas = events.flatMap((e) => (e.case === "toolCallDelta" ? [e.value.argumentsJson] : []));
    expect(deltas.length).toBeGreaterThan(2);
    expect(JSON.parse(deltas.join(""))).toEqual({ command: "echo hello world" });
    expect(turn.stopReason).toBe(StopReason.TOOL_USE);
    expect(turn.toolCalls.map((c) => [c.id, c.name, c.status])).toEqual([["toolu_1", "Bash", "complete"]]);
  });

  it("a call cut by max_tokens ends closed, with no markup as text, and the turn stops at max_tokens", async () => {
    const { events, turn } = await run(format, call, { maxTokens: Math.ceil(call.length / 4) - 4 });
    expect(events.filter((e) => e.case === "textDelta")).toEqual([]);
    expect(turn.stopReason).toBe(StopReason.MAX_TOKENS);
    const deltas = events.flatMap((e) => (e.case === "toolCallDelta" ? [e.value.argumentsJson] : []));
    expect(typeof JSON.parse(deltas.join(""))).toBe("object");
    expect(turn.toolCalls.map((c) => c.status)).toEqual(["truncated"]);
  });
});

it("a malformed call ends the turn as end_turn, not tool_use", async () => {
  const { turn, events } = await run(
    new ChatMlFormat(),
    '<tool_call>\n{"name": "Bash", "arguments": {"command": ls}}\n</tool_call>',
  );
  expect(turn.toolCalls.map((c) => c.status)).toEqual(["malformed"]);
  expect(turn.stopReason).toBe(StopReason.END_TURN);
  expect(events.filter((e) => e.case === "textDelta")).toEqual([]);
});

it("a call cut before its name is complete leaves nothing: no call, no text", async () => {
  const { turn, events } = await run(new ChatMlFormat(), 'Let me see.\n<tool_call>\n{"nam', { eog: false });
  expect(new Set(events.map((e) => e.case))).toEqual(new Set(["textDelta"]));
  expect(turn.visibleText).toBe("Let me see.");
  expect(turn.toolCalls).toEqual([]);
});

describe("thinking tokens", () => {
  // Each token is 4 characters here: count the tokens up to and including the one closing thinking.
  const tokensThrough = (output: string, end: string) => Math.ceil((output.indexOf(end) + end.length) / 4);

  it("counts the tokens sampled inside a thinking block the prompt left open, its close included", async () => {
    const output = "let me think about it</think>\n\nThe answer.";
    const { turn } = await run(new ChatMlFormat(), output, { thinkingOpen: true });
    expect(turn.thinkingTokens).toBe(tokensThrough(output, "</think>"));
    expect(turn.outputTokens).toBe(Math.ceil(output.length / 4));
  });

  it("counts a thinking block the model opens itself, from its first thinking text", async () => {
    const output = "<think>\nweighing the options</think>\n\nDone.";
    const { turn } = await run(new Qwen3Format(), output);
    // The tokens spelling `<think>` are not counted: thinking starts with its first text.
    expect(turn.thinkingTokens).toBe(tokensThrough(output, "</think>") - 2);
  });

  it("counts none when the model does not think", async () => {
    expect((await run(new ChatMlFormat(), "Just an answer.")).turn.thinkingTokens).toBe(0);
    expect((await run(new ChatMlFormat(), HERMES)).turn.thinkingTokens).toBe(0);
  });
});
