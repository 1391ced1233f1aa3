/**
 * Which declared hosted tools this worker offers (those it has a provider for), and the tool
 * definition each is offered as: a plain tool in the family's own markup, so the model calls it
 * like any other and a grammar can force it.
 */
import { create } from "@bufbuild/protobuf";
import {
  type ServerToolDeclaration,
  ServerToolKind,
  type ToolDefinition,
  ToolDefinitionSchema,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { checkNever } from "../../shared/check-never.ts";
import type { ServerToolsConfig } from "./config.ts";

export interface OfferedServerTools {
  /** Offered declarations by the name the model calls. */
  readonly byName: ReadonlyMap<string, ServerToolDeclaration>;
  /** Declared types with no provider here, in order, without repeats. */
  readonly notOffered: readonly string[];
}

export function offerServerTools(
  declared: readonly ServerToolDeclaration[],
  config: ServerToolsConfig | undefined,
): OfferedServerTools {
  const byName = new Map<string, ServerToolDeclaration>();
  const notOffered: string[] = [];
  for (const declaration of declared) {
    if (hasProvider(declaration.kind, config)) byName.set(declaration.name, declaration);
    else if (!notOffered.includes(declaration.type)) notOffered.push(declaration.type);
  }
  return { byName, notOffered };
}

function hasProvider(kind: ServerToolKind, config: ServerToolsConfig | undefined): boolean {
  switch (kind) {
    case ServerToolKind.WEB_SEARCH:
      return config?.search !== undefined;
    case ServerToolKind.WEB_FETCH:
      return config?.fetch !== undefined;
    case ServerToolKind.UNSPECIFIED:
      return false;
    default:
      return checkNever(kind, "server tool kind");
  }
}

/** Longest query and URL a call may carry (longer: `query_too_long` / `url_too_long`). */
export const MAX_QUERY_CHARS = 400;
export const MAX_URL_CHARS = 2000;

export function serverToolDefinition(declaration: ServerToolDeclaration): ToolDefinition {
  const search = declaration.kind === ServerToolKind.WEB_SEARCH;
  const schema = search
    ? {
        type: "object",
        properties: { query: { type: "string", description: "The search query.", minLength: 1, maxLength: 200 } },
        required: ["query"],
        additionalProperties: false,
      }
    : {
        type: "object",
        properties: {
          url: {
            type: "string",
            description: "The URL to fetch (it must appear in the conversation).",
            maxLength: 500,
          },
        },
        required: ["url"],
        additionalProperties: false,
      };
  return create(ToolDefinitionSchema, {
    name: declaration.name,
    description: search
      ? "Search the web. Returns numbered results, each with its title, URL, age and a snippet."
      : "Fetch a web page or document by URL and return its text.",
    inputSchemaJson: JSON.stringify(schema),
  });
}
