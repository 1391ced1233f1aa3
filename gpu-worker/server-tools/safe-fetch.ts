/**
 * web_fetch's HTTP client, SSRF-safe by default: only http(s), every hop's host resolved once and
 * each resolved address checked (address-policy.ts), the socket connected to exactly that checked
 * address (the resolver is the socket's `lookup`, so a DNS answer that changes between check and
 * connect — rebinding — cannot swap it), redirects followed by hand and re-checked, a byte cap, a
 * deadline. Nothing here throws for a refused or failed fetch: the outcome says why.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { checkAddress } from "./address-policy.ts";

export interface FetchPolicy {
  /** Tests only (FRONTIER_FETCH_ALLOW_LOOPBACK=1): 127.0.0.0/8 and ::1 become reachable. */
  allowLoopback: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Host name → addresses (default: the system resolver). Injectable for tests. */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}

export type FetchFailure = "url_not_allowed" | "url_not_accessible" | "unsupported_content_type";

export type FetchOutcome =
  | { ok: true; url: string; contentType: string; body: string; truncated: boolean }
  | { ok: false; error: FetchFailure; detail: string };

class Refused extends Error {}

export async function safeFetch(rawUrl: string, policy: FetchPolicy, signal?: AbortSignal): Promise<FetchOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, error: "url_not_allowed", detail: "not a URL" };
  }
  const deadline = AbortSignal.timeout(policy.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
  for (let hop = 0; hop <= policy.maxRedirects; hop++) {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      return { ok: false, error: "url_not_allowed", detail: `scheme ${url.protocol} is not fetched` };
    }
    if (url.username !== "" || url.password !== "") {
      return { ok: false, error: "url_not_allowed", detail: "URLs with credentials are not fetched" };
    }
    const literal = url.hostname.replace(/^\[|\]$/g, "");
    if (isIP(literal) !== 0) {
      const verdict = checkAddress(literal, policy.allowLoopback);
      if (!verdict.allowed)
        return { ok: false, error: "url_not_allowed", detail: `address ${literal} (${verdict.reason})` };
    }
    let response: HopResponse;
    try {
      response = await requestOnce(url, policy, combined);
    } catch (error) {
      if (error instanceof Refused) return { ok: false, error: "url_not_allowed", detail: error.message };
      const detail = deadline.aborted ? "timed out" : error instanceof Error ? error.message : String(error);
      return { ok: false, error: "url_not_accessible", detail };
    }
    if (response.status >= 300 && response.status < 400 && response.location !== undefined) {
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
function checkedLookup(policy: FetchPolicy): LookupFunction {
  const resolve = policy.resolve ?? systemResolve;
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (addresses) => {
        const first = addresses[0];
        if (!first) return callback(new Error(`${hostname} did not resolve`), "", 4);
        for (const a of addresses) {
          const verdict = checkAddress(a.address, policy.allowLoopback);
          if (!verdict.allowed) {
            return callback(new Refused(`${hostname} resolves to ${a.address} (${verdict.reason})`), "", 4);
          }
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
        lookup: checkedLookup(policy),
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
