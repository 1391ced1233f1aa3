/**
 * Hosted tools a client declares (Anthropic `web_search_20250305` / `web_fetch_20250910`, Responses
 * `web_search` / `web_search_preview`), read into the proto declaration the worker offers and runs.
 * The worker decides what it can offer (its providers); what it cannot is named back in
 * `x-frontier-tools-not-offered`. Other hosted tool types are never offered and are named there too.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ServerToolDeclaration,
  ServerToolDeclarationSchema,
  ServerToolKind,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { asArray, asInteger, asString, fail, optional, type Path } from "../core/check.ts";

const MAX_DOMAINS = 100;

/** The kind of an Anthropic hosted tool type, or undefined for one Frontier does not run. */
export function anthropicServerToolKind(type: string): ServerToolKind | undefined {
  if (/^web_search_\d{8}$/.test(type)) return ServerToolKind.WEB_SEARCH;
  if (/^web_fetch_\d{8}$/.test(type)) return ServerToolKind.WEB_FETCH;
  return undefined;
}

/** An Anthropic web_search / web_fetch declaration (its name must be the tool's own). */
export function anthropicServerTool(
  tool: Record<string, unknown>,
  type: string,
  kind: ServerToolKind,
  path: Path,
): ServerToolDeclaration {
  const expected = kind === ServerToolKind.WEB_SEARCH ? "web_search" : "web_fetch";
  const name = asString(optional(tool, "name") ?? expected, [...path, "name"]);
  if (name !== expected) fail([...path, "name"], `A ${type} tool must be named '${expected}'`);
  const maxUses = optional(tool, "max_uses");
  const maxContentTokens = optional(tool, "max_content_tokens");
  const allowed = domains(tool, "allowed_domains", path);
  const blocked = domains(tool, "blocked_domains", path);
  if (allowed.length > 0 && blocked.length > 0) {
    fail(path, "Specify either allowed_domains or blocked_domains, not both");
  }
  return create(ServerToolDeclarationSchema, {
    kind,
    name,
    type,
    maxUses: maxUses === undefined ? 0 : asInteger(maxUses, [...path, "max_uses"], { min: 1, max: 1000 }),
    allowedDomains: allowed,
    blockedDomains: blocked,
    maxContentTokens:
      maxContentTokens === undefined
        ? 0
        : asInteger(maxContentTokens, [...path, "max_content_tokens"], { min: 1, max: 1_000_000 }),
  });
}

/** A Responses `web_search` / `web_search_preview` tool (filters.allowed_domains honoured). */
export function responsesWebSearch(tool: Record<string, unknown>, type: string, path: Path): ServerToolDeclaration {
  const filters = optional(tool, "filters");
  const allowed =
    typeof filters === "object" && filters !== null && !Array.isArray(filters)
      ? domains(filters as Record<string, unknown>, "allowed_domains", [...path, "filters"])
      : [];
  return create(ServerToolDeclarationSchema, {
    kind: ServerToolKind.WEB_SEARCH,
    name: "web_search",
    type,
    allowedDomains: allowed,
  });
}

function domains(tool: Record<string, unknown>, key: string, path: Path): string[] {
  const value = optional(tool, key);
  if (value === undefined || value === null) return [];
  const list = asArray(value, [...path, key]);
  if (list.length > MAX_DOMAINS) fail([...path, key], `At most ${MAX_DOMAINS} domains are allowed`);
  return list.map((entry, i) => asString(entry, [...path, key, i]));
}
