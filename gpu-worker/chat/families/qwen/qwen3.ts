/**
 * Qwen3 (hybrid thinking) exactly as its chat template renders it: ChatML with Hermes JSON tool
 * calls (`hermes.ts`). Unlike `chatml`, the generation prefix is the template's own: with thinking
 * on, `<|im_start|>assistant\n` and the model opens `<think>` itself (the parser takes a leading
 * `<think>` as thinking); with thinking off, `<|im_start|>assistant\n<think>\n\n</think>\n\n`.
 * Where the template rewrites history, Frontier's exact transcript wins: the template drops the
 * reasoning of turns before the last user query; Frontier keeps it (the live KV holds it).
 */
import { FamilyFormat, type FamilySpec } from "../../engine/family.ts";
import { CHATML_HERMES_TURNS, HERMES_CALLS, IM_START } from "./hermes.ts";

const QWEN3: FamilySpec = {
  name: "qwen3",
  ...CHATML_HERMES_TURNS,
  // Qwen3 opens `<think>` itself when thinking is on.
  calls: { ...HERMES_CALLS, thinking: { ...HERMES_CALLS.thinking, modelOpens: true } },
  generation: (ctx) => ({
    header: `${IM_START}assistant\n`,
    prefill: ctx.thinking ? "" : "<think>\n\n</think>\n\n",
    thinkingOpen: false,
  }),
};

export class Qwen3Format extends FamilyFormat {
  constructor() {
    super(QWEN3);
  }
}
