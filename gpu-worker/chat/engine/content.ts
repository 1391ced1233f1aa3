/** Block-level rendering shared by the formats. */

import type { ContentBlock, Message, ToolResultBlock } from "../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { checkNever } from "../../../shared/check-never.ts";
import type { PromptBuilder } from "./prompt-builder.ts";

/** A rendered piece: template text (its control tokens parsed) or client text (never parsed). */
export type Part = { template: string } | { content: string };

export type ItemKind = "thinking" | "text" | "call" | "other";

/** One block's rendering inside a turn. */
export interface Item {
  kind: ItemKind;
  parts: Part[];
}

export function emitParts(builder: PromptBuilder, parts: readonly Part[]): void {
  for (const part of parts) {
    if ("template" in part) builder.template(part.template);
    else builder.content(part.content);
  }
}

/** Items joined by a separator chosen from the kinds on either side. */
export function joinItems(items: readonly Item[], separator: (prev: Item, next: Item) => string): Part[] {
  const parts: Part[] = [];
  items.forEach((item, i) => {
    const prev = items[i - 1];
    if (prev !== undefined) {
      const sep = separator(prev, item);
      if (sep !== "") parts.push({ template: sep });
    }
    parts.push(...item.parts);
  });
  return parts;
}

/** "\n\n" between text blocks, "\n" between anything else. */
export function defaultSeparator(prev: Item, next: Item): string {
  return prev.kind === "text" && next.kind === "text" ? "\n\n" : "\n";
}

/**
 * A block shown as context where the format has no native form for it (opaque blocks Frontier did
 * not make, or a block kind in an unusual role). Never dropped.
 */
export function contextText(block: ContentBlock): string | undefined {
  const b = block.block;
  switch (b.case) {
    case "text":
      return b.value.text;
    case "thinking":
      return `[thinking] ${b.value.thinking}`;
    case "toolUse":
      return `[tool_use ${b.value.name}] ${b.value.inputJson}`;
    case "toolResult":
      return `[tool_result${b.value.isError ? " error" : ""}] ${b.value.content}`;
    case "opaque":
      return b.value.text !== "" ? b.value.text : `[${b.value.type}] ${b.value.json}`;
    case "serverToolUse":
      return `[server_tool_use ${b.value.name}] ${b.value.inputJson}`;
    case "serverToolResult":
      return `[${b.value.type}${b.value.isError ? " error" : ""}] ${b.value.text}`;
    case undefined:
      return undefined;
    default:
      return checkNever(b, "content block");
  }
}

/** Text of a system-role message: its blocks as context, text blocks joined by "\n\n". */
export function systemMessageText(message: Message): string {
  const items: Item[] = [];
  for (const block of message.content) {
    const text = contextText(block);
    if (text !== undefined)
      items.push({ kind: block.block.case === "text" ? "text" : "other", parts: [{ content: text }] });
  }
  return joinItems(items, defaultSeparator)
    .map((p) => ("template" in p ? p.template : p.content))
    .join("");
}

/** Items of a user turn: text blocks, tool results in the format's wrapper, other blocks as context. */
export function userItems(message: Message, toolResult: (result: ToolResultBlock) => Part[]): Item[] {
  const items: Item[] = [];
  for (const block of message.content) {
    const b = block.block;
    if (b.case === "text") items.push({ kind: "text", parts: [{ content: b.value.text }] });
    else if (b.case === "toolResult") items.push({ kind: "other", parts: toolResult(b.value) });
    else {
      const text = contextText(block);
      if (text !== undefined) items.push({ kind: "other", parts: [{ content: text }] });
    }
  }
  return items;
}

/** Tool result content, marked when the tool failed. */
export function toolResultText(result: ToolResultBlock): string {
  return result.isError ? `[error] ${result.content}` : result.content;
}

/** A tool_use block's input as given, `{}` when empty. */
export function toolInputText(inputJson: string): string {
  return inputJson.trim() === "" ? "{}" : inputJson;
}
