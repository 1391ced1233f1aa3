/**
 * Where web_search gets its hits. One interface, one provider so far: SearXNG's JSON API
 * (`GET <base>/search?q=…&format=json`; enable `json` under `search.formats` in its settings).
 * The provider's URL is the operator's, so it is called directly (no SSRF policy: it may be local).
 */

export interface ProviderHit {
  url: string;
  title: string;
  /** Snippet text the model reads. */
  snippet: string;
  /** When the page was published, as the provider says it ("" when unknown). */
  pageAge: string;
}

export interface SearchProvider {
  readonly name: string;
  search(query: string, signal: AbortSignal): Promise<ProviderHit[]>;
}

export class SearxngProvider implements SearchProvider {
  readonly name = "searxng";

  constructor(
    readonly baseUrl: string,
    readonly timeoutMs: number,
  ) {}

  async search(query: string, signal: AbortSignal): Promise<ProviderHit[]> {
    const url = `${this.baseUrl}/search?q=${encodeURIComponent(query)}&format=json`;
    const response = await fetch(url, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(this.timeoutMs)]),
      headers: { accept: "application/json" },
    });
    if (!response.ok) throw new Error(`SearXNG answered HTTP ${response.status}`);
    const body: unknown = await response.json();
    const results = isRecord(body) && Array.isArray(body.results) ? body.results : [];
    const hits: ProviderHit[] = [];
    for (const entry of results) {
      if (!isRecord(entry) || typeof entry.url !== "string") continue;
      hits.push({
        url: entry.url,
        title: typeof entry.title === "string" ? entry.title : entry.url,
        snippet: typeof entry.content === "string" ? entry.content : "",
        pageAge: typeof entry.publishedDate === "string" ? entry.publishedDate : "",
      });
    }
    return hits;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
