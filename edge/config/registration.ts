/**
 * Who may register as a GPU worker (`POST /internal/pool/heartbeat`), under which URL and with how
 * many sequences.
 * - Per-worker credentials: `POOL_WORKER_TOKENS` maps a worker id to its credential, either the
 *   SHA-256 of that worker's own token (the older form) or an object
 *   `{ "sha256": "<hex>", "url": "<exact URL or patterns>", "capacity": <sequences>, "region": "<name>" }`.
 *   A credential registers exactly one pool row, keyed by its worker id. `url` is the one URL the
 *   worker may advertise (`http://10.0.0.5:50061`) or operator patterns it may move within
 *   (`10.0.1.0/24:50061,*.gpu.internal`); omitted (and in the older form) the worker may advertise any
 *   URL `POOL_ALLOWED_WORKER_URLS` allows. `capacity` is the ceiling on the sequences it may claim
 *   (default `POOL_WORKER_CAPACITY`, 64). Credentials issued at run time (admin API) live in the pool
 *   DO and take the same shape. (Local development may also use the one shared `POOL_TOKEN_SHA256`;
 *   outside it that is a ConfigError, see secret-policy.ts.)
 * - An allow-list of endpoints: whatever the credential, the URL a worker advertises must match
 *   `POOL_ALLOWED_WORKER_URLS` (comma-separated IPv4 CIDRs or addresses, host names with an optional
 *   leading `*.`, each with an optional `:port`); unset, only loopback in local development and
 *   nothing otherwise.
 */
import { ConfigError } from "../core/config-values.ts";

export interface RegistrationVars {
  /** JSON: worker id → sha256-hex of its token, or { sha256, url?, capacity?, region? }. */
  POOL_WORKER_TOKENS?: string;
  /** Comma-separated endpoint patterns a registered worker URL must match. */
  POOL_ALLOWED_WORKER_URLS?: string;
  /** The capacity ceiling (sequences) of a credential that names none. */
  POOL_WORKER_CAPACITY?: string;
}

export type EndpointPattern =
  | { kind: "cidr"; base: number; mask: number; port: string | undefined }
  | { kind: "host"; host: string; wildcard: boolean; port: string | undefined };

/** What one worker credential allows: its id, where it may be reached, how much it may claim. */
export interface WorkerBinding {
  id: string;
  /** An exact base URL, or comma-separated endpoint patterns; undefined: whatever the allow-list allows. */
  url: string | undefined;
  /** The most sequences this worker may claim; placement never counts more. */
  capacity: number;
  /** The one region it may join; undefined: any configured region. */
  region: string | undefined;
  /** env: POOL_WORKER_TOKENS; runtime: issued through the admin API; dev: the shared local token. */
  source: "env" | "runtime" | "dev";
}

/** A configured credential: the SHA-256 of its token and what it binds. */
export interface WorkerCredential {
  sha256: string;
  binding: WorkerBinding;
}

export interface RegistrationConfig {
  workerCredentials: ReadonlyMap<string, WorkerCredential>;
  /** The same credentials' token digests alone: worker id → sha256-hex. */
  workerTokenHashes: ReadonlyMap<string, string>;
  allowedWorkerUrls: readonly EndpointPattern[];
  /** The ceiling of a credential that names no capacity (and of the shared development token). */
  defaultWorkerCapacity: number;
}

const DEV_ALLOWED = "127.0.0.0/8,localhost,[::1]";
/** The largest capacity a credential may name (the heartbeat's own bound). */
export const MAX_WORKER_CAPACITY = 1_000_000;
const DEFAULT_CAPACITY = 64;
const SHAPE =
  "POOL_WORKER_TOKENS must be a JSON object: worker id → sha256-hex of its token or { sha256, url, capacity }";
export const WORKER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function parseRegistration(vars: RegistrationVars, dev: boolean): RegistrationConfig {
  const defaultWorkerCapacity = capacityOf(
    vars.POOL_WORKER_CAPACITY?.trim() || DEFAULT_CAPACITY,
    "POOL_WORKER_CAPACITY",
  );
  const workerCredentials = parseWorkerTokens(vars.POOL_WORKER_TOKENS, defaultWorkerCapacity);
  return {
    workerCredentials,
    workerTokenHashes: new Map([...workerCredentials].map(([id, c]) => [id, c.sha256])),
    allowedWorkerUrls: parsePatterns(vars.POOL_ALLOWED_WORKER_URLS?.trim() || (dev ? DEV_ALLOWED : "")),
    defaultWorkerCapacity,
  };
}

function parseWorkerTokens(raw: string | undefined, defaultCapacity: number): Map<string, WorkerCredential> {
  const out = new Map<string, WorkerCredential>();
  if (raw === undefined || raw.trim() === "") return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(SHAPE);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError(SHAPE);
  for (const [id, value] of Object.entries(parsed)) {
    if (!WORKER_ID.test(id)) throw new ConfigError(`POOL_WORKER_TOKENS: not a worker id: ${id}`);
    const entry = typeof value === "string" ? { sha256: value } : value;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw new ConfigError(SHAPE);
    const { sha256, url, capacity, region } = entry as Record<string, unknown>;
    if (typeof sha256 !== "string" || !/^[0-9a-fA-F]{64}$/.test(sha256)) {
      throw new ConfigError(`POOL_WORKER_TOKENS.${id} must be a sha256 hex digest`);
    }
    if (region !== undefined && (typeof region !== "string" || !/^[a-z0-9][a-z0-9-]{0,31}$/.test(region))) {
      throw new ConfigError(`POOL_WORKER_TOKENS.${id}.region: not a region name`);
    }
    const binding: WorkerBinding = {
      id,
      url: url === undefined ? undefined : parseUrlBinding(url, `POOL_WORKER_TOKENS.${id}.url`),
      capacity: capacity === undefined ? defaultCapacity : capacityOf(capacity, `POOL_WORKER_TOKENS.${id}.capacity`),
      region,
      source: "env",
    };
    out.set(id, { sha256: sha256.toLowerCase(), binding });
  }
  return out;
}

/** A capacity ceiling: a whole number of sequences from 1 to MAX_WORKER_CAPACITY. */
export function capacityOf(raw: unknown, field: string): number {
  const value = typeof raw === "string" ? Number(raw) : raw;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1 || value > MAX_WORKER_CAPACITY) {
    throw new ConfigError(`${field} must be a whole number of sequences from 1 to ${MAX_WORKER_CAPACITY}`);
  }
  return value;
}

/**
 * A credential's URL binding as stored: an exact http(s) base URL (normalised) or endpoint patterns
 * (validated, kept as written).
 */
export function parseUrlBinding(raw: unknown, field: string): string {
  if (typeof raw !== "string" || raw.trim() === "")
    throw new ConfigError(`${field}: an http(s) URL or endpoint patterns`);
  const value = raw.trim();
  if (/^https?:\/\//i.test(value)) {
    const url = exactUrl(value);
    if (url === undefined) throw new ConfigError(`${field}: not an http(s) base URL: ${value}`);
    return url;
  }
  parsePatterns(value, field);
  return value;
}

/** A base URL in one spelling (lowercase scheme and host, default port dropped, no trailing slash). */
export function exactUrl(raw: string): string | undefined {
  try {
    const url = new URL(raw);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search || url.hash || url.username) {
      return undefined;
    }
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
  } catch {
    return undefined;
  }
}

/** True when the binding is one exact URL (it names the worker's address, not a range). */
export function isExactBinding(binding: WorkerBinding): boolean {
  return binding.url !== undefined && /^https?:\/\//i.test(binding.url);
}

/** True when the credential's own URL binding admits `url` (the allow-list is checked besides). */
export function bindingAdmits(binding: WorkerBinding, url: string): boolean {
  if (binding.url === undefined) return true;
  if (isExactBinding(binding)) return exactUrl(url) === binding.url;
  return workerUrlAllowed(url, parsePatterns(binding.url));
}

export function parsePatterns(raw: string, field = "POOL_ALLOWED_WORKER_URLS"): EndpointPattern[] {
  return raw
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((p) => parsePattern(p, field));
}

function parsePattern(raw: string, field: string): EndpointPattern {
  const bad = () => new ConfigError(`${field}: not an address, CIDR or host pattern: ${raw}`);
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
