/**
 * Kimi's forced calls. Each call's ID is part of its markup and counts the conversation's calls
 * (kimi-calls.ts), so the n-th call of a turn is its own rule, opened with `functions.NAME:IDX`
 * for IDX = the history's call count + n. Everything else is the shared tool grammar.
 */
import { MAX_PARALLEL_CALLS } from "../../call-format.ts";
import { answerGrammar } from "../../grammar/answer-grammar.ts";
import { GbnfRules, gbnfLiteral } from "../../grammar/gbnf.ts";
import { JsonSchemaGrammar } from "../../grammar/json-schema-grammar.ts";
import {
  fixedTextGrammar,
  type ToolCallMarkup,
  toolCallsExpression,
  withThinkingClose,
} from "../../grammar/tool-grammar.ts";
import type { AnswerGrammarOptions, FixedToolCall, ToolCallGrammarOptions } from "../../types.ts";
import { CALL_ARGUMENTS, CALL_BEGIN, kimiCallId } from "./kimi-calls.ts";

/** The markup of the call at conversation position `index` (no section around it). */
function callAt(markup: ToolCallMarkup, index: number): ToolCallMarkup {
  return {
    ...markup,
    blockOpen: "",
    blockClose: "",
    callOpen: (name) => `${CALL_BEGIN}${kimiCallId(name, index)}${CALL_ARGUMENTS}`,
  };
}

/** The section of 1..n numbered calls (n = 1 unless parallel), the first `minCalls` of them required. */
function numberedCalls(
  markup: ToolCallMarkup,
  json: JsonSchemaGrammar,
  options: Omit<ToolCallGrammarOptions, "thinkingOpen">,
): string {
  const first = options.firstCallIndex ?? 0;
  const most = options.parallel ? MAX_PARALLEL_CALLS : 1;
  const least = Math.min(Math.max(options.minCalls ?? 1, 1), most);
  const one = { ...options, parallel: false };
  const calls = Array.from({ length: most }, (_, n) => toolCallsExpression(callAt(markup, first + n), json, one, 1));
  const sep = markup.separator === "" ? "" : `${gbnfLiteral(markup.separator)} `;
  let optional = "";
  for (let n = most - 1; n >= least; n--) optional = ` (${sep}${calls[n]}${optional})?`;
  const required = calls.slice(0, least).join(` ${sep}`);
  return `${gbnfLiteral(markup.blockOpen)} ${required}${optional} ${gbnfLiteral(markup.blockClose)}`;
}

/** A forced call turn; `markup.thinkingClose` (Kimi's empty `<think></think>`) comes first. */
export function kimiToolCallGrammar(markup: ToolCallMarkup, options: ToolCallGrammarOptions): string {
  const json = new JsonSchemaGrammar(new GbnfRules(), { stringsWithoutAngle: false });
  return json.rules.toGrammar(withThinkingClose(markup, true, numberedCalls(markup, json, options)));
}

/** A JSON answer, or (tool_choice auto) one numbered call instead. */
export function kimiAnswerGrammar(markup: ToolCallMarkup, options: AnswerGrammarOptions): string {
  const first = options.calls?.firstCallIndex ?? 0;
  return answerGrammar(
    { ...callAt(markup, first), blockOpen: markup.blockOpen, blockClose: markup.blockClose },
    {
      ...options,
      thinkingOpen: true,
    },
    1,
  );
}

/** Exactly these calls, numbered from `first`, arguments verbatim. */
export function kimiFixedCallsGrammar(markup: ToolCallMarkup, calls: readonly FixedToolCall[], first: number): string {
  const body = calls
    .map((c, n) => `${callAt(markup, first + n).callOpen(c.name)}${c.argumentsJson}${markup.callClose}`)
    .join(markup.separator);
  return fixedTextGrammar(markup, `${markup.blockOpen}${body}${markup.blockClose}`, true);
}
