/**
 * Hosted tools' configuration, from the worker's environment:
 * - FRONTIER_SEARCH_PROVIDER=searxng with FRONTIER_SEARXNG_URL=<base URL>: web_search is offered.
 * - FRONTIER_WEB_FETCH=on: web_fetch is offered (Frontier fetches pages itself, SSRF-checked).
 * - FRONTIER_FETCH_ALLOW_LOOPBACK=1: tests only, 127.0.0.0/8 and ::1 become fetchable (on any port).
 * - FRONTIER_FETCH_PORTS: the ports web_fetch may connect to, comma-separated (default 80,443).
 * - limits: FRONTIER_SERVER_TOOL_STEPS (hosted-tool steps per turn before pause_turn, 8),
 *   FRONTIER_SEARCH_MAX_RESULTS (5), FRONTIER_SEARCH_TIMEOUT_MS (10000), FRONTIER_FETCH_MAX_BYTES
 *   (2 MiB), FRONTIER_FETCH_TIMEOUT_MS (10000), FRONTIER_FETCH_MAX_REDIRECTS (5),
 *   FRONTIER_FETCH_MAX_CHARS (page text the model reads, 20000).
 */
import type { FetchPolicy } from "./safe-fetch.ts";
import { type SearchProvider, SearxngProvider } from "./search-provider.ts";

export interface ServerToolsConfig {
  search: SearchProvider | undefined;
  fetch: FetchPolicy | undefined;
  /** Steps of one turn that may end in hosted-tool calls; the next such step pauses the turn. */
  maxSteps: number;
  maxSearchResults: number;
  maxFetchChars: number;
}

export function loadServerToolsConfig(env: NodeJS.ProcessEnv): ServerToolsConfig {
  return {
    search: searchProvider(env),
    fetch: fetchPolicy(env),
    maxSteps: positive(env, "FRONTIER_SERVER_TOOL_STEPS", 8),
    maxSearchResults: positive(env, "FRONTIER_SEARCH_MAX_RESULTS", 5),
    maxFetchChars: positive(env, "FRONTIER_FETCH_MAX_CHARS", 20_000),
  };
}

function searchProvider(env: NodeJS.ProcessEnv): SearchProvider | undefined {
  const name = env.FRONTIER_SEARCH_PROVIDER ?? "";
  if (name === "") return undefined;
  if (name !== "searxng") throw new Error(`FRONTIER_SEARCH_PROVIDER must be "searxng" or unset, got "${name}"`);
  const base = env.FRONTIER_SEARXNG_URL ?? "";
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error("FRONTIER_SEARCH_PROVIDER=searxng needs FRONTIER_SEARXNG_URL (an http(s) URL)");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("FRONTIER_SEARXNG_URL must be http(s)");
  return new SearxngProvider(base.replace(/\/+$/, ""), positive(env, "FRONTIER_SEARCH_TIMEOUT_MS", 10_000));
}

function fetchPolicy(env: NodeJS.ProcessEnv): FetchPolicy | undefined {
  const mode = env.FRONTIER_WEB_FETCH ?? "";
  if (mode === "" || mode === "off") return undefined;
  if (mode !== "on") throw new Error(`FRONTIER_WEB_FETCH must be "on", "off" or unset, got "${mode}"`);
  return {
    allowLoopback: env.FRONTIER_FETCH_ALLOW_LOOPBACK === "1",
    ports: ports(env, "FRONTIER_FETCH_PORTS", [80, 443]),
    maxBytes: positive(env, "FRONTIER_FETCH_MAX_BYTES", 2 * 1024 * 1024),
    timeoutMs: positive(env, "FRONTIER_FETCH_TIMEOUT_MS", 10_000),
    maxRedirects: positive(env, "FRONTIER_FETCH_MAX_REDIRECTS", 5),
  };
}

function ports(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  return raw.split(",").map((part) => {
    const port = Number(part.trim());
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      throw new Error(`${name} must be comma-separated ports (1-65535), got "${raw}"`);
    }
    return port;
  });
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}
