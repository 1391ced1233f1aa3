/**
 * Anthropic advanced tool use (`advanced-tool-use-2025-11-20`): a tool declared with
 * `defer_loading: true` stays out of the prompt until a `tool_reference` block in a tool result
 * names it; from then on it is callable. The checks follow Anthropic's rules (a 400 naming the
 * field): at least one declared tool is not deferred, the tool search tool itself is never
 * deferred, and every reference names a declared tool. A forced `tool_choice` may not name a
 * deferred tool no reference has loaded (it is not in the prompt, so no grammar may force it).
 */
import { fail, type Path } from "../../../core/check.ts";
import type { InputMessage, ToolChoiceSpec, ToolSpec } from "./types.ts";

/** Anthropic's hosted tool search types (`tool_search_tool_regex_20251119`, `…_bm25_…`): never run here. */
export function isToolSearchType(type: string): boolean {
  return /^tool_search_tool_(regex|bm25)_\d{8}$/.test(type);
}

/** Every declared tool (client, hosted, not offered) is deferred: `deferred` of `declared`. */
export function checkNotAllDeferred(declared: number, deferred: number): void {
  if (declared > 0 && deferred === declared) {
    fail(["tools"], "All tools have defer_loading set. At least one tool must be non-deferred.");
  }
}

/** Names the `tool_reference` blocks of the history name, in order of first reference. */
export function referencedToolNames(messages: readonly InputMessage[]): string[] {
  const names: string[] = [];
  for (const { content } of messages)
    for (const block of content) {
      if (block.type !== "tool_result" || typeof block.content === "string") continue;
      for (const part of block.content)
        if (part.type === "tool_reference" && !names.includes(part.tool_name)) names.push(part.tool_name);
    }
  return names;
}

/** Each `tool_reference` names a declared tool (`messages.i.content.j.content.k.tool_name`). */
export function checkToolReferences(messages: readonly InputMessage[], declared: ReadonlySet<string>): void {
  messages.forEach(({ content }, i) => {
    content.forEach((block, j) => {
      if (block.type !== "tool_result" || typeof block.content === "string") return;
      block.content.forEach((part, k) => {
        if (part.type !== "tool_reference" || declared.has(part.tool_name)) return;
        const path: Path = ["messages", i, "content", j, "content", k, "tool_name"];
        fail(path, `Tool reference '${part.tool_name}' has no corresponding tool definition`);
      });
    });
  });
}

/** A forced `tool_choice` names a tool in the prompt: not a deferred one no reference has loaded. */
export function checkForcedChoice(
  choice: ToolChoiceSpec | undefined,
  tools: readonly ToolSpec[],
  referenced: readonly string[],
): void {
  if (choice?.type !== "tool") return;
  const tool = tools.find((t) => t.name === choice.name);
  if (tool?.defer_loading && !referenced.includes(tool.name)) {
    fail(
      ["tool_choice", "name"],
      `Tool '${choice.name}' has defer_loading set and no tool_reference has loaded it; it cannot be forced`,
    );
  }
}

/** The tools the header renders (not deferred) and the deferred ones a reference loaded (in reference order). */
export function splitDeferred(
  tools: readonly ToolSpec[],
  messages: readonly InputMessage[],
): { header: ToolSpec[]; referenced: ToolSpec[] } {
  const deferred = new Map(tools.filter((t) => t.defer_loading).map((t) => [t.name, t] as const));
  const referenced = referencedToolNames(messages).flatMap((name) => {
    const tool = deferred.get(name);
    return tool === undefined ? [] : [tool];
  });
  return { header: tools.filter((t) => !t.defer_loading), referenced };
}
