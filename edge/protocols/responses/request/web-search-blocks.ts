/**
 * Responses items Frontier did not make → proto blocks the model reads as context: a
 * `web_search_call` as a server tool call plus a readable result (the sources it listed, if any;
 * the other provider's results themselves never reach the history), reasoning with foreign
 * `encrypted_content` as its visible text only. Each keeps the client's item JSON verbatim.
 */
import { create } from "@bufbuild/protobuf";
import { type ContentBlock, ContentBlockSchema } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { searchResultText, serverToolErrorText } from "../../../../shared/server-tool-text.ts";
import type { ReasoningItem, WebSearchAction, WebSearchCallItem } from "./types.ts";

export function webSearchCallBlocks(item: WebSearchCallItem): ContentBlock[] {
  // Frontier's own call (edge/protocols/responses/request/web-search-calls.ts): the exact text the model read.
  const own = item.result;
  const input = actionInput(item.action);
  const use = create(ContentBlockSchema, {
    block: { case: "serverToolUse", value: { id: item.id, name: "web_search", inputJson: JSON.stringify(input) } },
  });
  const result = create(ContentBlockSchema, {
    block: {
      case: "serverToolResult",
      value: own
        ? { toolUseId: item.id, type: "web_search_call", text: own.text, isError: own.isError }
        : { toolUseId: item.id, type: "web_search_call", text: resultText(item), isError: item.status === "failed" },
    },
  });
  return [use, result];
}

export function foreignReasoningBlock(item: ReasoningItem): ContentBlock {
  const json = JSON.stringify({ type: "reasoning", text: item.text, encrypted_content: item.encrypted_content });
  const text =
    item.text === "" ? "[reasoning from another model, not readable]" : `[reasoning from another model] ${item.text}`;
  return create(ContentBlockSchema, {
    block: { case: "opaque", value: { type: "reasoning", json, text, anchor: item.encrypted_content ?? "" } },
  });
}

function actionInput(action: WebSearchAction | undefined): Record<string, string> {
  switch (action?.type) {
    case undefined:
      return {};
    case "search":
      return { query: action.query };
    case "open_page":
      return { url: action.url };
    case "find":
      return { url: action.url, pattern: action.pattern };
    case "other":
      return { action: action.kind };
  }
}

function resultText(item: WebSearchCallItem): string {
  if (item.status === "failed") return serverToolErrorText("web_search_failed");
  const sources = item.action?.type === "search" ? item.action.sources : [];
  if (sources.length === 0) return "(results were seen by another model and are not in this history)";
  return searchResultText(sources.map((url) => ({ url, title: url })));
}
