/**
 * Qwen3 (hybrid thinking) exactly as its chat template renders it: ChatML with Hermes JSON tool
 * calls (`hermes.ts`). Unlike `chatml`, the generation prefix is the template's own: with thinking
 * on, `<|im_start|>assistant\n` and the model opens `<think>` itself (the parser takes a leading
 * `<think>` as thinking); with thinking off, `<|im_start|>assistant\n<think>\n\n</think>\n\n`.
 * Where the template rewrites history, Frontier's exact transcript wins: the template drops the
 * reasoning of turns before the last user query; Frontier keeps it (the live KV holds it).
 */
import { FamilyFormat, type FamilySpec } from "./family.ts";
import {
  CHATML_CONTROL_TOKENS,
  chatMlSystem,
  HERMES_TOOL_MARKUP,
  hermesAssistant,
  hermesHeader,
  hermesUser,
  IM_END,
  IM_START,
  readHermesSpan,
} from "./hermes.ts";
import { TaggedOutputParser } from "./tagged-parser.ts";
import { MAX_PARALLEL_CALLS } from "./tool-grammar.ts";

const QWEN3: FamilySpec = {
  name: "qwen3",
  controlTokens: CHATML_CONTROL_TOKENS,
  turnControlTokens: [],
  endOfTurnText: IM_END,
  endOfGenerationTexts: [IM_END, "<|endoftext|>"],
  maxCallsPerTurn: MAX_PARALLEL_CALLS,
  markup: HERMES_TOOL_MARKUP,
  header: hermesHeader,
  system: chatMlSystem,
  user: hermesUser,
  assistantHeader: () => `${IM_START}assistant\n`,
  assistantBody: hermesAssistant,
  assistantClose: () => `${IM_END}\n`,
  generation: (ctx) => ({
    header: `${IM_START}assistant\n`,
    prefill: ctx.thinking ? "" : "<think>\n\n</think>\n\n",
    thinkingOpen: false,
  }),
  parser: (options) =>
    new TaggedOutputParser(
      { thinkOpen: "<think>", thinkClose: "</think>", spanOpen: "<tool_call>", readSpan: readHermesSpan },
      options,
    ),
};

export class Qwen3Format extends FamilyFormat {
  constructor() {
    super(QWEN3);
  }
}
