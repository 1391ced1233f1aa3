/** The pool part of the edge configuration: regions, their static members, and the pool/admin tokens. */
import { ConfigError, isHttpUrl, positiveInt } from "../core/config-values.ts";
import { parseRegistration, type RegistrationConfig, type RegistrationVars } from "./registration.ts";

export interface PoolVars extends RegistrationVars {
  /** JSON: region → { location_hint?, workers?: [gRPC-Web URLs] } (static pool members per region). */
  REGIONS?: string;
  /** This edge's home region (default: the first configured region, else "local"). */
  HOME_REGION?: string;
  /** Local development only: sha256-hex of one token every worker may register with (else POOL_WORKER_TOKENS). */
  POOL_TOKEN_SHA256?: string;
  /** sha256-hex of the admin bearer token (`/admin/...`); unset: admin routes refuse every call. */
  ADMIN_TOKEN_SHA256?: string;
  /** A registered worker without a heartbeat for this long is down. */
  HEARTBEAT_TIMEOUT_MS?: string;
  /** How long an edge isolate reuses its view of the pools. */
  POOL_CACHE_MS?: string;
  /**
   * Characters of a new conversation's prompt prefix that a worker of another region must hold beyond
   * what the home region holds before the session is placed there (edge/pool/region-order.ts).
   */
  PLACEMENT_REMOTE_PREFIX_CHARS?: string;
}

/** One region's pool: its static members and where its Durable Objects should live. */
export interface RegionConfig {
  name: string;
  /** Durable Object location hint for the region's PoolDO and the sessions placed there (e.g. "enam"). */
  locationHint: LocationHint | undefined;
  /** Static members (gRPC-Web base URLs); registered workers join at run time. */
  workers: string[];
}

export interface PoolConfig extends RegistrationConfig {
  /** Every static worker URL, all regions. */
  workerUrls: string[];
  /** The home region first. */
  regions: RegionConfig[];
  homeRegion: string;
  poolTokenHash: string | undefined;
  adminTokenHash: string | undefined;
  heartbeatTimeoutMs: number;
  poolCacheMs: number;
  /** PLACEMENT_REMOTE_PREFIX_CHARS (default 65536). */
  remotePrefixChars: number;
}

const LOCATION_HINTS = [
  "wnam",
  "enam",
  "sam",
  "weur",
  "eeur",
  "apac",
  "apac-ne",
  "apac-se",
  "oc",
  "afr",
  "me",
] as const;

/** Durable Object location hints (the same strings as workers-types' DurableObjectLocationHint). */
export type LocationHint = (typeof LOCATION_HINTS)[number];
const SHAPE = "REGIONS must be a JSON object: region → { location_hint?, workers? }";

/** `workerUrls`: the `WORKER_URLS` list, static members of the home region. */
export function parsePoolConfig(vars: PoolVars, workerUrls: string[], dev: boolean): PoolConfig {
  const regions = parseRegions(vars.REGIONS);
  const home = vars.HOME_REGION?.trim() || regions[0]?.name || "local";
  let homeRegion = regions.find((r) => r.name === home);
  if (!homeRegion) {
    homeRegion = { name: regionName(home), locationHint: undefined, workers: [] };
    regions.unshift(homeRegion);
  }
  for (const url of urls(workerUrls, "WORKER_URLS"))
    if (!homeRegion.workers.includes(url)) homeRegion.workers.push(url);
  const ordered = [homeRegion, ...regions.filter((r) => r !== homeRegion)];
  const poolTokenHash = sha256Var(vars.POOL_TOKEN_SHA256, "POOL_TOKEN_SHA256");
  const all = ordered.flatMap((r) => r.workers);
  const registration = parseRegistration(vars, dev);
  if (all.length === 0 && poolTokenHash === undefined && registration.workerTokenHashes.size === 0) {
    throw new ConfigError(
      "no GPU workers: set WORKER_URLS (or REGIONS), or POOL_WORKER_TOKENS so workers can register",
    );
  }
  return {
    ...registration,
    workerUrls: all,
    regions: ordered,
    homeRegion: homeRegion.name,
    poolTokenHash,
    adminTokenHash: sha256Var(vars.ADMIN_TOKEN_SHA256, "ADMIN_TOKEN_SHA256"),
    heartbeatTimeoutMs: positiveInt(vars.HEARTBEAT_TIMEOUT_MS, "HEARTBEAT_TIMEOUT_MS", 6000),
    poolCacheMs: positiveInt(vars.POOL_CACHE_MS, "POOL_CACHE_MS", 1000),
    remotePrefixChars: positiveInt(vars.PLACEMENT_REMOTE_PREFIX_CHARS, "PLACEMENT_REMOTE_PREFIX_CHARS", 65_536),
  };
}

function parseRegions(raw: string | undefined): RegionConfig[] {
  if (raw === undefined || raw.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(SHAPE);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError(SHAPE);
  return Object.entries(parsed as Record<string, unknown>).map(([name, value]) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ConfigError(SHAPE);
    const { location_hint: hint, workers = [] } = value as { location_hint?: unknown; workers?: unknown };
    if (hint !== undefined && !(LOCATION_HINTS as readonly string[]).includes(String(hint))) {
      throw new ConfigError(`REGIONS.${name}.location_hint: not a Durable Object location hint: ${String(hint)}`);
    }
    if (!Array.isArray(workers)) throw new ConfigError(`REGIONS.${name}.workers must be an array of URLs`);
    return {
      name: regionName(name),
      locationHint: hint as LocationHint | undefined,
      workers: urls(workers, `REGIONS.${name}.workers`),
    };
  });
}

function regionName(name: string): string {
  if (!/^[a-z0-9][a-z0-9-]{0,31}$/.test(name)) throw new ConfigError(`region names are lowercase [a-z0-9-]: ${name}`);
  return name;
}

function urls(values: unknown[], field: string): string[] {
  return values.map((value) => {
    const url = String(value).trim().replace(/\/+$/, "");
    if (!isHttpUrl(url)) throw new ConfigError(`${field}: not an http(s) URL: ${url}`);
    return url;
  });
}

function sha256Var(raw: string | undefined, name: string): string | undefined {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === "") return undefined;
  if (!/^[0-9a-f]{64}$/.test(value)) throw new ConfigError(`${name} must be a sha256 hex digest`);
  return value;
}
