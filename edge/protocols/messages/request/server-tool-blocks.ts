/**
 * Hosted-tool and foreign blocks → proto blocks, as the model reads them: `server_tool_use` as a
 * server tool call, results as readable text (shared/server-tool-text.ts: title, URL and age of a
 * foreign hit, never its ciphertext), foreign thinking and `redacted_thinking` as marked context
 * that keeps the client's anchor (signature, data) for re-placement on the worker.
 */
import { create } from "@bufbuild/protobuf";
import { type ContentBlock, ContentBlockSchema } from "../../../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { fetchResultText, searchResultText, serverToolErrorText } from "../../../../shared/server-tool-text.ts";
import type { InputBlock } from "./types.ts";

type ServerToolInput = Extract<
  InputBlock,
  { type: "server_tool_use" | "web_search_tool_result" | "web_fetch_tool_result" | "redacted_thinking" }
>;
type ThinkingInput = Extract<InputBlock, { type: "thinking" }>;

export function serverToolBlock(block: ServerToolInput): ContentBlock {
  switch (block.type) {
    case "server_tool_use":
      return create(ContentBlockSchema, {
        block: {
          case: "serverToolUse",
          value: { id: block.id, name: block.name, inputJson: JSON.stringify(block.input) },
        },
      });
    case "web_search_tool_result": {
      const content = block.content;
      const text =
        content.type === "error"
          ? serverToolErrorText(content.error_code)
          : searchResultText(
              content.hits.map((hit) => ({ url: hit.url, title: hit.title, pageAge: hit.page_age, text: hit.text })),
            );
      return resultBlock(block.tool_use_id, block.type, text, content.type === "error");
    }
    case "web_fetch_tool_result": {
      const content = block.content;
      const text =
        content.type === "error"
          ? serverToolErrorText(content.error_code)
          : fetchResultText({
              url: content.url,
              title: content.title,
              retrievedAt: content.retrieved_at,
              text: content.data,
            });
      return resultBlock(block.tool_use_id, block.type, text, content.type === "error");
    }
    case "redacted_thinking":
      return opaque("redacted_thinking", block.json, "[redacted thinking]", block.data);
  }
}

/** Thinking whose signature is not Frontier's: context, never the model's own reasoning. */
export function foreignThinkingBlock(block: ThinkingInput): ContentBlock {
  const json = JSON.stringify({ type: "thinking", thinking: block.thinking, signature: block.signature });
  return opaque("thinking", json, `[thinking from another model] ${block.thinking}`, block.signature);
}

function resultBlock(toolUseId: string, type: string, text: string, isError: boolean): ContentBlock {
  return create(ContentBlockSchema, { block: { case: "serverToolResult", value: { toolUseId, type, text, isError } } });
}

function opaque(type: string, json: string, text: string, anchor: string): ContentBlock {
  return create(ContentBlockSchema, { block: { case: "opaque", value: { type, json, text, anchor } } });
}
