/**
 * Runs one hosted-tool call the model made: checks its input and the client's limits (max_uses,
 * allowed/blocked domains), asks the provider or fetches the page, and returns the outcome the
 * edge renders plus the exact text the model reads (shared/server-tool-text.ts: the edge renders a
 * replayed result with the same functions). A failure is an error result, never an exception.
 */
import {
  type FetchedPage,
  type SearchHit,
  type ServerToolDeclaration,
  ServerToolKind,
} from "../../proto/gen/frontier/worker/v1/worker_pb.ts";
import { fetchResultText, searchResultText, serverToolErrorText } from "../../shared/server-tool-text.ts";
import type { ServerToolsConfig } from "./config.ts";
import { MAX_QUERY_CHARS, MAX_URL_CHARS } from "./declarations.ts";
import { htmlToText } from "./html-text.ts";
import { safeFetch } from "./safe-fetch.ts";
import { domainAllowed, urlInContext } from "./url-rules.ts";

/** What one call produced: the proto outcome's fields and the text rendered into the KV. */
export interface CallOutcome {
  kind: ServerToolKind;
  query: string;
  errorCode: string;
  hits: Omit<SearchHit, "$typeName">[];
  page: Omit<FetchedPage, "$typeName"> | undefined;
  modelText: string;
}

export interface CallContext {
  config: ServerToolsConfig;
  /** Calls of this tool already made in this request. */
  usesSoFar: number;
  /** Every text the conversation holds (user turns, tool results): web_fetch only fetches URLs from it. */
  contextText: string;
  signal: AbortSignal;
}

export async function runServerCall(
  declaration: ServerToolDeclaration,
  argumentsJson: string,
  ctx: CallContext,
): Promise<CallOutcome> {
  const search = declaration.kind === ServerToolKind.WEB_SEARCH;
  const field = search ? "query" : "url";
  const value = stringArgument(argumentsJson, field);
  const failed = (errorCode: string): CallOutcome => ({
    kind: declaration.kind,
    query: value ?? "",
    errorCode,
    hits: [],
    page: undefined,
    modelText: serverToolErrorText(errorCode),
  });
  if (declaration.maxUses > 0 && ctx.usesSoFar >= declaration.maxUses) return failed("max_uses_exceeded");
  if (value === undefined || value.trim() === "") return failed("invalid_input");
  return search ? runSearch(declaration, value, ctx, failed) : runFetch(declaration, value, ctx, failed);
}

async function runSearch(
  declaration: ServerToolDeclaration,
  query: string,
  ctx: CallContext,
  failed: (code: string) => CallOutcome,
): Promise<CallOutcome> {
  const provider = ctx.config.search;
  if (!provider) return failed("unavailable");
  if (query.length > MAX_QUERY_CHARS) return failed("query_too_long");
  let found: Awaited<ReturnType<typeof provider.search>>;
  try {
    found = await provider.search(query, ctx.signal);
  } catch {
    return failed("unavailable");
  }
  const hits = found
    .filter((hit) => domainAllowed(hit.url, declaration))
    .slice(0, ctx.config.maxSearchResults)
    .map((hit) => ({ url: hit.url, title: hit.title, pageAge: hit.pageAge, text: hit.snippet }));
  return { kind: declaration.kind, query, errorCode: "", hits, page: undefined, modelText: searchResultText(hits) };
}

async function runFetch(
  declaration: ServerToolDeclaration,
  url: string,
  ctx: CallContext,
  failed: (code: string) => CallOutcome,
): Promise<CallOutcome> {
  const policy = ctx.config.fetch;
  if (!policy) return failed("unavailable");
  if (url.length > MAX_URL_CHARS) return failed("url_too_long");
  // As Anthropic's web_fetch: only URLs the conversation already holds (whole URLs, not a prefix of
  // one), so the model cannot be talked into sending data to an address of its own making.
  if (!urlInContext(url, ctx.contextText) || !domainAllowed(url, declaration)) return failed("url_not_allowed");
  // The domains are checked again on every redirect.
  const fetched = await safeFetch(url, policy, { signal: ctx.signal, domains: declaration });
  if (!fetched.ok) return failed(fetched.error);
  const tokenCap = declaration.maxContentTokens > 0 ? declaration.maxContentTokens * 4 : Number.POSITIVE_INFINITY;
  const limit = Math.min(ctx.config.maxFetchChars, tokenCap);
  const html = /html/i.test(fetched.contentType);
  // The conversion stops once the model's share of text is out (and on its own clock).
  const extracted = html ? htmlToText(fetched.body, { maxTextChars: limit }) : { title: "", text: fetched.body };
  const page = {
    url: fetched.url,
    title: extracted.title,
    retrievedAt: new Date().toISOString(),
    text: extracted.text.length > limit ? extracted.text.slice(0, limit) : extracted.text,
  };
  return { kind: declaration.kind, query: url, errorCode: "", hits: [], page, modelText: fetchResultText(page) };
}

function stringArgument(argumentsJson: string, field: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(argumentsJson);
    if (typeof parsed !== "object" || parsed === null) return undefined;
    const value: unknown = (parsed as Record<string, unknown>)[field];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
