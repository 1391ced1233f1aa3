/** Validation of a `web_search_call` input item (a hosted search in a history Frontier did not write). */
import { asArray, asObject, asString, fail, optional, type Path, required } from "../../../core/check.ts";
import type { WebSearchAction, WebSearchCallItem } from "./types.ts";

export function validateWebSearchCall(item: Record<string, unknown>, path: Path): WebSearchCallItem {
  const id = asString(required(item, "id", path), [...path, "id"]);
  if (id === "") fail([...path, "id"], "String should have at least 1 character");
  const status = optional(item, "status");
  const action = optional(item, "action");
  const encrypted = optional(item, "encrypted_content");
  return {
    type: "web_search_call",
    id,
    status: status === undefined ? "completed" : asString(status, [...path, "status"]),
    action: action === undefined ? undefined : searchAction(asObject(action, [...path, "action"]), [...path, "action"]),
    json: JSON.stringify(item),
    ...(encrypted === undefined ? {} : { encrypted_content: asString(encrypted, [...path, "encrypted_content"]) }),
  };
}

function searchAction(action: Record<string, unknown>, path: Path): WebSearchAction {
  const type = asString(required(action, "type", path), [...path, "type"]);
  const text = (key: string) => asString(required(action, key, path), [...path, key]);
  switch (type) {
    case "search": {
      const sources = optional(action, "sources");
      const list = sources === undefined ? [] : asArray(sources, [...path, "sources"]);
      return {
        type,
        query: text("query"),
        sources: list.map((source, i) => {
          const at = [...path, "sources", i];
          return asString(required(asObject(source, at), "url", at), [...at, "url"]);
        }),
      };
    }
    case "open_page":
      return { type, url: text("url") };
    case "find":
      return { type, url: text("url"), pattern: text("pattern") };
    default:
      return { type: "other", kind: type };
  }
}
