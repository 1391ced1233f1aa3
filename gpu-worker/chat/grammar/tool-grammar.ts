/**
 * Grammar builders shared by the formats. They read a family's calls as `ToolCallMarkup`, which
 * engine/call-markup.ts derives from the family's `CallFormat` (call-format.ts).
 */
import { MAX_PARALLEL_CALLS } from "../call-format.ts";

import type { FixedToolCall, GrammarTool, ToolCallGrammarOptions } from "../types.ts";
import { freeformInput, freeformJsonArguments } from "./freeform-grammar.ts";
import { GbnfRules, gbnfLiteral } from "./gbnf.ts";
import { JsonSchemaGrammar } from "./json-schema-grammar.ts";

export interface ToolCallMarkup {
  /** Sampled after an open thinking block to close it with empty reasoning. */
  thinkingClose: string;
  /** Around all the calls of a turn ("" when each call stands alone). */
  blockOpen: string;
  blockClose: string;
  /** Between two calls. */
  separator: string;
  /** Everything of one call before its arguments JSON. */
  callOpen(name: string): string;
  /** Everything of one call after its arguments JSON. */
  callClose: string;
  /** The arguments' grammar, where they are not the JSON object itself (XML parameters). */
  argumentsGrammar?(json: JsonSchemaGrammar, tool: GrammarTool): string;
  /** JSON strings inside the arguments exclude `<` (values end at a closing tag the parser searches for). */
  stringsWithoutAngle?: boolean;
  /** Opens visible text where plain text is not what a turn starts with (harmony's final channel). */
  textOpen?: string;
  /** The arguments' text of a fixed call, where they are not its JSON verbatim. */
  argumentsText?(argumentsJson: string): string;
}

/** The exact text of a turn's calls, arguments verbatim. */
export function toolCallsText(markup: ToolCallMarkup, calls: readonly FixedToolCall[]): string {
  const body = calls
    .map(
      (c) =>
        `${markup.callOpen(c.name)}${markup.argumentsText?.(c.argumentsJson) ?? c.argumentsJson}${markup.callClose}`,
    )
    .join(markup.separator);
  return `${markup.blockOpen}${body}${markup.blockClose}`;
}

export function withThinkingClose(markup: ToolCallMarkup, thinkingOpen: boolean, body: string): string {
  return thinkingOpen ? `${gbnfLiteral(markup.thinkingClose)} ${body}` : body;
}

/** One forced call (or 1..MAX_PARALLEL_CALLS) of the chosen tools, arguments following their schemas. */
export function toolCallGrammar(
  markup: ToolCallMarkup,
  options: ToolCallGrammarOptions,
  maxCalls = MAX_PARALLEL_CALLS,
): string {
  const json = new JsonSchemaGrammar(new GbnfRules(), { stringsWithoutAngle: markup.stringsWithoutAngle === true });
  const body = toolCallsExpression(markup, json, options, maxCalls);
  return json.rules.toGrammar(withThinkingClose(markup, options.thinkingOpen, body));
}

/** The GBNF expression (rules added to `json.rules`) of a turn's calls: block markup, 1..n calls. */
export function toolCallsExpression(
  markup: ToolCallMarkup,
  json: JsonSchemaGrammar,
  options: Omit<ToolCallGrammarOptions, "thinkingOpen">,
  maxCalls = MAX_PARALLEL_CALLS,
): string {
  const { choice } = options;
  const byName = new Map(options.tools.map((t) => [t.name, t] as const));
  const selected = choice === "any" ? [...byName.values()] : [byName.get(choice.name)].filter((t) => t !== undefined);
  if (selected.length === 0) {
    throw new RangeError(
      choice === "any"
        ? "tool_choice any needs at least one tool"
        : `tool_choice names an unknown tool: ${choice.name}`,
    );
  }
  const rules = json.rules;
  const alternatives = selected.map((tool) => {
    const freeform = markup.argumentsGrammar === undefined ? freeformInput(rules, tool, "json") : undefined;
    const args =
      (freeform === undefined ? undefined : freeformJsonArguments(freeform)) ??
      markup.argumentsGrammar?.(json, tool) ??
      json.toolArguments(tool.inputSchemaJson, `${tool.name}-args`, tool.name);
    return rules.add(
      `call-${tool.name}`,
      `${gbnfLiteral(markup.callOpen(tool.name))} ${args} ${gbnfLiteral(markup.callClose)}`,
    );
  });
  const call = alternatives.length === 1 ? (alternatives[0] as string) : rules.add("call", alternatives.join(" | "));
  const least = Math.min(Math.max(options.minCalls ?? 1, 1), maxCalls);
  const more =
    options.parallel && maxCalls > 1 ? ` (${gbnfLiteral(markup.separator)} ${call}){${least - 1},${maxCalls - 1}}` : "";
  const parts = [
    markup.blockOpen === "" ? "" : gbnfLiteral(markup.blockOpen),
    `${call}${more}`,
    markup.blockClose === "" ? "" : gbnfLiteral(markup.blockClose),
  ];
  return parts.filter((p) => p !== "").join(" ");
}

export function fixedTextGrammar(markup: ToolCallMarkup, text: string, thinkingOpen: boolean): string {
  return exactGrammar(markup, `${markup.textOpen ?? ""}${text}`, thinkingOpen);
}

function exactGrammar(markup: ToolCallMarkup, text: string, thinkingOpen: boolean): string {
  return new GbnfRules().toGrammar(gbnfLiteral(thinkingOpen ? `${markup.thinkingClose}${text}` : text));
}

export function fixedToolCallsGrammar(
  markup: ToolCallMarkup,
  calls: readonly FixedToolCall[],
  thinkingOpen: boolean,
): string {
  if (calls.length === 0) throw new RangeError("fixedToolCallsGrammar needs at least one call");
  return exactGrammar(markup, toolCallsText(markup, calls), thinkingOpen);
}

/** A short sentence: a capitalised word, up to 11 more lowercase words, then ".". */
export function plainTextGrammar(markup: ToolCallMarkup, thinkingOpen: boolean): string {
  const rules = new GbnfRules();
  rules.define("first-word", () => "[A-Z] [a-z]{0,7}");
  rules.define("word", () => "[a-z]{1,8}");
  const open = markup.textOpen === undefined ? "" : `${gbnfLiteral(markup.textOpen)} `;
  return rules.toGrammar(withThinkingClose(markup, thinkingOpen, `${open}first-word (" " word){0,11} "."`));
}
