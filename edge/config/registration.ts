/**
 * Who may register as a GPU worker (`POST /internal/pool/heartbeat`), and under which URL.
 * - Per-worker tokens: `POOL_WORKER_TOKENS` maps a worker id to the SHA-256 of that worker's own
 *   token; a token registers only its own id. (Local development may also use the one shared
 *   `POOL_TOKEN_SHA256`; outside it that is a ConfigError, see secret-policy.ts.)
 * - An allow-list of endpoints: the URL a worker advertises must match `POOL_ALLOWED_WORKER_URLS`
 *   (comma-separated IPv4 CIDRs or addresses, host names with an optional leading `*.`, each with
 *   an optional `:port`); unset, only loopback in local development and nothing otherwise.
 */
import { ConfigError } from "../core/config-values.ts";

export interface RegistrationVars {
  /** JSON: worker id → sha256-hex of that worker's pool token. */
  POOL_WORKER_TOKENS?: string;
  /** Comma-separated endpoint patterns a registered worker URL must match. */
  POOL_ALLOWED_WORKER_URLS?: string;
}

export type EndpointPattern =
  | { kind: "cidr"; base: number; mask: number; port: string | undefined }
  | { kind: "host"; host: string; wildcard: boolean; port: string | undefined };

export interface RegistrationConfig {
  workerTokenHashes: ReadonlyMap<string, string>;
  allowedWorkerUrls: readonly EndpointPattern[];
}

const DEV_ALLOWED = "127.0.0.0/8,localhost,[::1]";

export function parseRegistration(vars: RegistrationVars, dev: boolean): RegistrationConfig {
  return {
    workerTokenHashes: parseWorkerTokens(vars.POOL_WORKER_TOKENS),
    allowedWorkerUrls: parsePatterns(vars.POOL_ALLOWED_WORKER_URLS?.trim() || (dev ? DEV_ALLOWED : "")),
  };
}

function parseWorkerTokens(raw: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (raw === undefined || raw.trim() === "") return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError("POOL_WORKER_TOKENS must be a JSON object: worker id → sha256-hex of its token");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError("POOL_WORKER_TOKENS must be a JSON object: worker id → sha256-hex of its token");
  }
  for (const [id, digest] of Object.entries(parsed)) {
    if (typeof digest !== "string" || !/^[0-9a-fA-F]{64}$/.test(digest)) {
      throw new ConfigError(`POOL_WORKER_TOKENS.${id} must be a sha256 hex digest`);
    }
    out.set(id, digest.toLowerCase());
  }
  return out;
}

function parsePatterns(raw: string): EndpointPattern[] {
  return raw
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map(parsePattern);
}

function parsePattern(raw: string): EndpointPattern {
  const bad = () => new ConfigError(`POOL_ALLOWED_WORKER_URLS: not an address, CIDR or host pattern: ${raw}`);
  const bracketed = /^\[([0-9a-fA-F:]+)\](?::(\d{1,5}))?$/.exec(raw);
  if (bracketed) return { kind: "host", host: `[${bracketed[1]?.toLowerCase()}]`, wildcard: false, port: bracketed[2] };
  const match = /^([^:/]+)(?:\/(\d{1,2}))?(?::(\d{1,5}))?$/.exec(raw);
  if (!match) throw bad();
  const [, host = "", bits, port] = match;
  const ip = ipv4(host);
  if (ip !== undefined) {
    const prefix = bits === undefined ? 32 : Number(bits);
    if (prefix > 32) throw bad();
    const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
    return { kind: "cidr", base: (ip & mask) >>> 0, mask, port };
  }
  if (bits !== undefined) throw bad();
  const wildcard = host.startsWith("*.");
  const name = (wildcard ? host.slice(2) : host).toLowerCase();
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(name)) throw bad();
  return { kind: "host", host: name, wildcard, port };
}

function ipv4(host: string): number | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((acc, p) => ((acc << 8) | Number(p)) >>> 0, 0);
}

/** True when the worker URL's host (and port, when the pattern names one) matches a pattern. */
export function workerUrlAllowed(url: string, patterns: readonly EndpointPattern[]): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  const host = parsed.hostname.toLowerCase();
  const port = parsed.port || (parsed.protocol === "https:" ? "443" : "80");
  const ip = ipv4(host);
  return patterns.some((p) => {
    if (p.port !== undefined && p.port !== port) return false;
    if (p.kind === "cidr") return ip !== undefined && (ip & p.mask) >>> 0 === p.base;
    if (ip !== undefined && p.wildcard) return false;
    return p.wildcard ? host.endsWith(`.${p.host}`) : host === p.host;
  });
}
