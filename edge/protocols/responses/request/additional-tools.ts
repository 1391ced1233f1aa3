/**
 * `additional_tools` input items (OpenAI: "a list of additional tools made available at this item",
 * role `developer`). Codex 0.171 with its default model sends its whole tool set as the first input
 * item and no top-level `tools`; a client may also add tools later in a conversation.
 *
 * - Before the conversation's first turn (only `instructions` and system/developer messages before
 *   it), an item's tools are the header's tools, after the request's own `tools`: where every chat
 *   family declares tools, exactly as if the client had sent them in `tools`.
 * - Later, the tools are callable from that point on (`Conversation.referenced_tools`: forced-call
 *   grammars and the output parser see them) and their definitions render in place, as the developer
 *   message the item is, one `Tool loaded: {"name","description","input_schema"}` line per tool (the
 *   text Anthropic's deferred tools use, in every family). Adding tools mid-conversation therefore
 *   appends to the prompt: the header, its fingerprint and every earlier byte stay as they were, and
 *   the live KV continues with the suffix only.
 *
 * A name declared again (in `tools` or an earlier item) keeps its first definition: it is already
 * callable and already in the prompt. Within one request a repeated name is a 400 (tools.ts).
 */
import type { AdditionalToolsItem, FunctionTool, InputItem } from "./types.ts";

/** Every tool the conversation's `additional_tools` items declare, in order (for mapping calls back). */
export function additionalTools(items: readonly InputItem[]): FunctionTool[] {
  return items.flatMap((item) => (item.type === "additional_tools" ? item.tools : []));
}

/** Hosted tool types the items declare that are not offered, without repeats. */
export function additionalToolsNotOffered(items: readonly InputItem[]): string[] {
  const types = items.flatMap((item) => (item.type === "additional_tools" ? item.tools_not_offered : []));
  return [...new Set(types)];
}

/** What the model reads where an item adds tools mid-conversation. */
export function addedToolsText(item: AdditionalToolsItem): string {
  return item.tools
    .map((tool) => {
      const definition = {
        name: tool.name,
        ...(tool.description === null ? {} : { description: tool.description }),
        input_schema: tool.parameters,
      };
      return `Tool loaded: ${JSON.stringify(definition)}`;
    })
    .join("\n");
}
