/**
 * Validation of the blocks a hosted-tool exchange leaves in a history: `server_tool_use`,
 * `web_search_tool_result`, `web_fetch_tool_result`, `redacted_thinking`, and a text block's
 * `citations`. Parsed into typed values (types.ts); a malformed one is a 400 naming the field.
 * Whether a block is Frontier's own or another provider's is decided later (foreign-history.ts).
 */
import { asArray, asObject, asString, fail, isObject, optional, type Path, required } from "../../../core/check.ts";
import type { InputBlock, SearchHitInput, WebFetchContent, WebSearchContent } from "./types.ts";

type Block = Record<string, unknown>;

export function validateServerToolUse(block: Block, path: Path): InputBlock {
  return {
    type: "server_tool_use",
    id: nonEmpty(required(block, "id", path), [...path, "id"]),
    name: nonEmpty(required(block, "name", path), [...path, "name"]),
    input: asObject(required(block, "input", path), [...path, "input"]),
  };
}

export function validateWebSearchResult(block: Block, path: Path): InputBlock {
  const at = [...path, "content"];
  const content = required(block, "content", path);
  return {
    type: "web_search_tool_result",
    tool_use_id: nonEmpty(required(block, "tool_use_id", path), [...path, "tool_use_id"]),
    content: Array.isArray(content) ? searchHits(content, at) : toolError(content, at),
  };
}

export function validateWebFetchResult(block: Block, path: Path): InputBlock {
  const at = [...path, "content"];
  const content = asObject(required(block, "content", path), at);
  const kind = asString(required(content, "type", at), [...at, "type"]);
  return {
    type: "web_fetch_tool_result",
    tool_use_id: nonEmpty(required(block, "tool_use_id", path), [...path, "tool_use_id"]),
    content: kind === "web_fetch_result" ? fetchedPage(content, at) : toolError(content, at),
  };
}

export function validateRedactedThinking(block: Block, path: Path, json: string): InputBlock {
  return { type: "redacted_thinking", data: nonEmpty(required(block, "data", path), [...path, "data"]), json };
}

/** A text block's `citations` (search result locations with `encrypted_index`...): checked, not rendered. */
export function validateCitations(block: Block, path: Path): void {
  const citations = optional(block, "citations");
  if (citations === undefined) return;
  asArray(citations, [...path, "citations"]).forEach((citation, i) => {
    const at = [...path, "citations", i];
    asString(required(asObject(citation, at), "type", at), [...at, "type"]);
  });
}

function searchHits(list: unknown[], path: Path): WebSearchContent {
  const hits = list.map((value, i): SearchHitInput => {
    const at = [...path, i];
    const hit = asObject(value, at);
    const type = asString(required(hit, "type", at), [...at, "type"]);
    if (type !== "web_search_result") fail([...at, "type"], "Input should be 'web_search_result'");
    const pageAge = optional(hit, "page_age");
    return {
      url: asString(required(hit, "url", at), [...at, "url"]),
      title: asString(required(hit, "title", at), [...at, "title"]),
      page_age: pageAge === undefined ? undefined : asString(pageAge, [...at, "page_age"]),
      encrypted_content: asString(required(hit, "encrypted_content", at), [...at, "encrypted_content"]),
    };
  });
  return { type: "hits", hits };
}

function fetchedPage(content: Block, path: Path): WebFetchContent {
  const retrieved = optional(content, "retrieved_at");
  const documentPath = [...path, "content"];
  const document = optional(content, "content");
  const doc = document === undefined ? undefined : asObject(document, documentPath);
  const title = doc === undefined ? undefined : optional(doc, "title");
  return {
    type: "page",
    url: asString(required(content, "url", path), [...path, "url"]),
    title: title === undefined ? undefined : asString(title, [...documentPath, "title"]),
    retrieved_at: retrieved === undefined ? undefined : asString(retrieved, [...path, "retrieved_at"]),
    data: doc === undefined ? undefined : documentText(doc, documentPath),
  };
}

/** A text source's data; a base64 (PDF) source has no readable text here. */
function documentText(doc: Block, path: Path): string | undefined {
  const at = [...path, "source"];
  const source = asObject(required(doc, "source", path), at);
  const type = asString(required(source, "type", at), [...at, "type"]);
  return type === "text" ? asString(required(source, "data", at), [...at, "data"]) : undefined;
}

/** `web_search_tool_result_error`, `web_fetch_tool_result_error`, ...: an object with an `error_code`. */
function toolError(value: unknown, path: Path): { type: "error"; error_code: string } {
  if (!isObject(value)) fail(path, "Input should be a valid list or an error object");
  const type = asString(required(value, "type", path), [...path, "type"]);
  if (!type.endsWith("_error")) fail([...path, "type"], "Input should be a result or a tool error object");
  return { type: "error", error_code: nonEmpty(required(value, "error_code", path), [...path, "error_code"]) };
}

function nonEmpty(value: unknown, path: Path): string {
  const text = asString(value, path);
  if (text === "") fail(path, "String should have at least 1 character");
  return text;
}
