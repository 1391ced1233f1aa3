/**
 * The grammar of a turn whose answer must be JSON (Chat Completions `response_format`, Responses
 * `text.format`): the answer is one JSON value under the schema (any JSON object for
 * `json_object`), bounded like tool arguments so even a random model ends. An open thinking block
 * is closed empty first, as for a forced call. With `calls` (tool_choice auto and tools), the turn
 * may make calls instead: the grammar allows the calls or the JSON answer.
 */

import { MAX_PARALLEL_CALLS } from "../call-format.ts";
import type { AnswerGrammarOptions } from "../types.ts";
import { GbnfRules, gbnfLiteral } from "./gbnf.ts";
import { JsonSchemaGrammar, SchemaGrammarError } from "./json-schema-grammar.ts";
import { checkStrictSchema } from "./strict-schema.ts";
import { type ToolCallMarkup, toolCallsExpression, withThinkingClose } from "./tool-grammar.ts";

export function answerGrammar(
  markup: ToolCallMarkup,
  options: AnswerGrammarOptions,
  maxCalls = MAX_PARALLEL_CALLS,
): string {
  const json = new JsonSchemaGrammar(new GbnfRules(), {
    stringsWithoutAngle: options.calls !== undefined && markup.stringsWithoutAngle === true,
  });
  let value: string;
  try {
    if (options.strict && options.schema !== undefined) checkStrictSchema(options.schema, options.field, options.field);
    value = json.describeAs(options.field).value(options.schema ?? { type: "object" }, "answer");
  } catch (error) {
    if (error instanceof SchemaGrammarError && error.param !== options.field)
      throw new SchemaGrammarError(error.message, options.field);
    throw error;
  }
  const open = markup.textOpen === undefined ? "" : `${gbnfLiteral(markup.textOpen)} `;
  const answer = `${open}${value}`;
  const body =
    options.calls === undefined
      ? answer
      : // Grouped: a thinking close written before it applies to both alternatives.
        `((${toolCallsExpression(markup, json, options.calls, maxCalls)}) | (${answer}))`;
  return json.rules.toGrammar(withThinkingClose(markup, options.thinkingOpen, body));
}
