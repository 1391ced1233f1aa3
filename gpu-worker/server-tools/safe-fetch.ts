/**
 * web_fetch's HTTP client, SSRF-safe by default: only http(s) on the configured ports (80 and 443
 * unless the deployment says otherwise), every hop's host resolved once and each resolved address
 * checked (address-policy.ts), the socket connected to exactly that checked address (the resolver
 * is the socket's `lookup`, so a DNS answer that changes between check and connect — rebinding —
 * cannot swap it), redirects followed by hand with every hop re-checked (scheme, credentials,
 * host against the call's allowed / blocked domains, port, address; never https → http), a byte
 * cap, a deadline. Nothing here throws for a refused or failed fetch: the outcome says why.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { checkAddress, isLoopback } from "./address-policy.ts";
import { type DomainRules, domainAllowed } from "./url-rules.ts";

export interface FetchPolicy {
  /**
   * Tests only (FRONTIER_FETCH_ALLOW_LOOPBACK=1): 127.0.0.0/8 and ::1 become reachable, on any
   * port (test servers listen on ephemeral ones); every other address keeps `ports`.
   */
  allowLoopback: boolean;
  /** Ports a fetch may connect to (FRONTIER_FETCH_PORTS, default 80 and 443). */
  ports: readonly number[];
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Host name → addresses (default: the system resolver). Injectable for tests. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

/** What one call adds to the deployment's policy. */
export interface FetchRequest {
  signal?: AbortSignal | undefined;
  /** The call's allowed / blocked domains, applied to the first URL and to every redirect. */
  domains?: DomainRules | undefined;
}

export type FetchFailure = "url_not_allowed" | "url_not_accessible" | "unsupported_content_type";

export type FetchOutcome =
  | { ok: true; url: string; contentType: string; body: string; truncated: boolean }
  | { ok: false; error: FetchFailure; detail: string };

class Refused extends Error {}

export async function safeFetch(
  rawUrl: string,
  policy: FetchPolicy,
  request: FetchRequest = {},
): Promise<FetchOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, error: "url_not_allowed", detail: "not a URL" };
  }
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const combined = request.signal ? AbortSignal.any([request.signal, deadline]) : deadline;
  let previous: URL | undefined;
  for (let hop = 0; hop <= policy.maxRedirects; hop++) {
    const refusal = refuseHop(url, previous, policy, request.domains);
    if (refusal !== undefined) return { ok: false, error: "url_not_allowed", detail: refusal };
    let response: HopResponse;
    try {
      response = await requestOnce(url, policy, combined);
    } catch (error) {
      if (error instanceof Refused) return { ok: false, error: "url_not_allowed", detail: error.message };
      const detail = deadline.aborted ? "timed out" : error instanceof Error ? error.message : String(error);
      return { ok: false, error: "url_not_accessible", detail };
    }
    if (response.status >= 300 && response.status < 400 && response.location !== undefined) {
      previous = url;
      try {
        url = new URL(response.location, url);
      } catch {
        return { ok: false, error: "url_not_accessible", detail: "bad redirect location" };
      }
      continue;
    }
    if (response.status < 200 || response.status >= 300) {
      return { ok: false, error: "url_not_accessible", detail: `HTTP ${response.status}` };
    }
    if (!isTextType(response.contentType)) {
      return { ok: false, error: "unsupported_content_type", detail: response.contentType || "no content type" };
    }
    return {
      ok: true,
      url: url.href,
      contentType: response.contentType,
      body: response.body,
      truncated: response.truncated,
    };
  }
  return { ok: false, error: "url_not_accessible", detail: `more than ${policy.maxRedirects} redirects` };
}

/** Why this hop (the first URL, or a redirect from `previous`) is not fetched; undefined: it may be. */
export function refuseHop(
  url: URL,
  previous: URL | undefined,
  policy: FetchPolicy,
  domains: DomainRules | undefined,
): string | undefined {
  if (url.protocol !== "http:" && url.protocol !== "https:") return `scheme ${url.protocol} is not fetched`;
  if (previous?.protocol === "https:" && url.protocol === "http:") return "redirect from https to http";
  if (url.username !== "" || url.password !== "") return "URLs with credentials are not fetched";
  if (domains && !domainAllowed(url, domains)) {
    return `${previous ? "redirect to " : ""}${url.hostname} is outside the allowed domains`;
  }
  const port = portOf(url);
  // With loopback allowed (tests), the port is judged with the address it resolves to.
  if (!policy.ports.includes(port) && !policy.allowLoopback) return `port ${port} is not fetched`;
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  return isIP(literal) !== 0 ? refuseAddress(literal, port, policy) : undefined;
}

function portOf(url: URL): number {
  if (url.port !== "") return Number(url.port);
  return url.protocol === "https:" ? 443 : 80;
}

/** Why a resolved address may not be connected to on this port; undefined: it may. */
function refuseAddress(address: string, port: number, policy: FetchPolicy): string | undefined {
  const verdict = checkAddress(address, policy.allowLoopback);
  if (!verdict.allowed) return `address ${address} (${verdict.reason})`;
  if (!policy.ports.includes(port) && !(policy.allowLoopback && isLoopback(address))) {
    return `port ${port} is not fetched`;
  }
  return undefined;
}

/** Text we can hand to the model (HTML is turned into text by the caller). */
function isTextType(contentType: string): boolean {
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return (
    type.startsWith("text/") ||
    type === "application/json" ||
    type === "application/xml" ||
    type === "application/xhtml+xml" ||
    type.endsWith("+json") ||
    type.endsWith("+xml")
  );
}

interface HopResponse {
  status: number;
  location: string | undefined;
  contentType: string;
  body: string;
  truncated: boolean;
}

/** The socket's resolver: resolve once, refuse if any address is not allowed, connect to the first. */
function checkedLookup(policy: FetchPolicy, port: number): LookupFunction {
  const resolve = policy.resolve ?? systemResolve;
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const first = addresses[0];
        if (!first) return callback(new Error(`${hostname} did not resolve`), "", 4);
        for (const a of addresses) {
          const refusal = refuseAddress(a.address, port, policy);
          if (refusal !== undefined) return callback(new Refused(`${hostname} resolves to ${refusal}`), "", 4);
        }
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [first]);
        else callback(null, first.address, first.family);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), "", 4),
    );
  };
}

function systemResolve(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );
}

function requestOnce(url: URL, policy: FetchPolicy, signal: AbortSignal): Promise<HopResponse> {
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: "GET",
        // A fresh connection per hop: a pooled socket would skip the checked lookup.
        agent: false,
        lookup: checkedLookup(policy, portOf(url)),
        signal,
        headers: { "user-agent": "Frontier-web_fetch/1", accept: "text/html, text/plain;q=0.9, */*;q=0.5" },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const location = typeof res.headers.location === "string" ? res.headers.location : undefined;
        const contentType = res.headers["content-type"] ?? "";
        if (status >= 300 && status < 400) {
          res.resume();
          return resolve({ status, location, contentType, body: "", truncated: false });
        }
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        res.on("data", (chunk: Buffer) => {
          if (truncated) return;
          const room = policy.maxBytes - size;
          if (chunk.length >= room) {
            chunks.push(chunk.subarray(0, room));
            size += room;
            truncated = true;
            res.destroy();
            resolve(done());
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        const done = (): HopResponse => ({
          status,
          location,
          contentType,
          body: decodeBody(Buffer.concat(chunks), contentType),
          truncated,
        });
        res.on("end", () => resolve(done()));
        res.on("error", (error) => (truncated ? undefined : reject(error)));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

function decodeBody(bytes: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}
