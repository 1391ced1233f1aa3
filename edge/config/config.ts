/** Edge configuration from wrangler `[vars]` (strings), parsed and checked once per env object. */
import { ConfigError, positiveInt } from "../core/config-values.ts";
import { type PoolConfig, type PoolVars, parsePoolConfig } from "./pool-config.ts";
import { isDevMode, refuseDevSecrets, type SecretVars } from "./secret-policy.ts";
import { parseTenantLimits, type TenantLimitConfig, type TenantLimitVars } from "./tenant-limits.ts";
import { type DeadlineVars, parseDeadlines, type StreamDeadlines } from "./worker-deadlines.ts";

export interface EdgeVars extends PoolVars, SecretVars, TenantLimitVars, DeadlineVars {
  /** Comma-separated GPU worker gRPC-Web base URLs. */
  WORKER_URLS?: string;
  /** JSON: worker URL → worker id, for static workers (capabilities are signed for a worker id; registered workers' ids come from the pool). */
  WORKER_IDS?: string;
  /** JSON object: sha256-hex of an API key → tenant id. */
  API_KEYS?: string;
  /** The edge's master secret: IDs' session keys, workers' capability keys, sealed text. Never given to a worker. */
  ID_SECRET?: string;
  /** Comma-separated model ids listed by GET /v1/models. */
  MODEL_IDS?: string;
  /** Ping interval while a stream is otherwise quiet. */
  KEEPALIVE_MS?: string;
  /** How long a stream waits for the worker's cache decision before sending headers without it. */
  HEADER_WAIT_MS?: string;
  /** Bearer token the GPU workers require on every call; shared with them. */
  WORKER_TOKEN?: string;
  /** Seconds a stored Responses API record stays retrievable and continuable (default 30 days). */
  RESPONSE_TTL_S?: string;
}

export interface EdgeConfig extends PoolConfig {
  /** FRONTIER_DEV=1: local development (development secrets allowed, loopback workers may register). */
  dev: boolean;
  tenantLimits: TenantLimitConfig;
  /** sha256-hex of key → tenant. */
  apiKeys: ReadonlyMap<string, string>;
  idSecret: string;
  /** Static workers' ids by URL (WORKER_IDS). */
  workerIds: ReadonlyMap<string, string>;
  modelIds: string[];
  keepAliveMs: number;
  headerWaitMs: number;
  /** The Generate stream's deadlines (config/worker-deadlines.ts). */
  workerDeadlines: StreamDeadlines;
  workerToken: string;
  responseTtlMs: number;
}

const cache = new WeakMap<object, EdgeConfig>();

export function loadConfig(vars: EdgeVars): EdgeConfig {
  let config = cache.get(vars);
  if (!config) {
    config = parseConfig(vars);
    cache.set(vars, config);
  }
  return config;
}

export function parseConfig(vars: EdgeVars): EdgeConfig {
  refuseDevSecrets(vars);
  const dev = isDevMode(vars);
  const pool = parsePoolConfig(vars, list(vars.WORKER_URLS), dev);
  const idSecret = vars.ID_SECRET ?? "";
  if (idSecret.length < 16) throw new ConfigError("ID_SECRET must be at least 16 characters");
  const workerToken = vars.WORKER_TOKEN ?? "";
  if (workerToken.length < 16) throw new ConfigError("WORKER_TOKEN must be at least 16 characters");
  const modelIds = list(vars.MODEL_IDS);
  if (modelIds.length === 0) throw new ConfigError("MODEL_IDS is empty");
  return {
    ...pool,
    dev,
    tenantLimits: parseTenantLimits(vars),
    apiKeys: parseApiKeys(vars.API_KEYS),
    idSecret,
    workerIds: parseWorkerIds(vars.WORKER_IDS),
    modelIds,
    keepAliveMs: positiveInt(vars.KEEPALIVE_MS, "KEEPALIVE_MS", 5000),
    headerWaitMs: positiveInt(vars.HEADER_WAIT_MS, "HEADER_WAIT_MS", 2000),
    workerDeadlines: parseDeadlines(vars),
    workerToken,
    responseTtlMs: positiveInt(vars.RESPONSE_TTL_S, "RESPONSE_TTL_S", 30 * 24 * 3600) * 1000,
  };
}

function parseApiKeys(raw: string | undefined): Map<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw ?? "");
  } catch {
    throw new ConfigError("API_KEYS must be a JSON object of sha256-hex → tenant");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError("API_KEYS must be a JSON object of sha256-hex → tenant");
  }
  const keys = new Map<string, string>();
  for (const [hash, tenant] of Object.entries(parsed)) {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new ConfigError("API_KEYS: keys must be lowercase sha256 hex digests");
    if (typeof tenant !== "string" || tenant === "")
      throw new ConfigError("API_KEYS: tenant ids must be non-empty strings");
    keys.set(hash, tenant);
  }
  return keys;
}

function parseWorkerIds(raw: string | undefined): Map<string, string> {
  const ids = new Map<string, string>();
  if (raw === undefined || raw.trim() === "") return ids;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ConfigError("WORKER_IDS must be a JSON object: worker URL → worker id");
  for (const [url, id] of Object.entries(parsed)) {
    if (typeof id !== "string" || id === "") throw new ConfigError(`WORKER_IDS.${url} must be a worker id`);
    ids.set(url.replace(/\/+$/, ""), id);
  }
  return ids;
}

function list(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}
