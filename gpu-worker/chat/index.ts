/** The chat-format layer: rendering, output parsing and sampling grammars. Pure; no engine. */

export { ChatMlFormat } from "./chatml.ts";
export { DeepSeekFormat } from "./deepseek.ts";
export { gbnfLiteral } from "./gbnf.ts";
export { JSON_GRAMMAR_LIMITS, JsonSchemaGrammar, jsonSchemaToGbnf } from "./json-schema-grammar.ts";
export { canonicalJson } from "./json-text.ts";
export { segmentsFrom } from "./prompt-builder.ts";
export { CHAT_FORMAT_NAMES, type ChatFormatName, selectChatFormat } from "./select-format.ts";
export type {
  ChatFormat,
  FixedToolCall,
  GrammarTool,
  OutputEvent,
  OutputParser,
  PromptSegment,
  RenderedPrompt,
  RenderOptions,
  ToolCallGrammarOptions,
} from "./types.ts";
