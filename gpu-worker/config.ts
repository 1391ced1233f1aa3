/** The GPU worker's configuration, read once from the environment at start-up. */
import { createHmac } from "node:crypto";
import {
  type EngineOptions,
  KV_CACHE_TYPES,
  PREFIX_COPY_METHODS,
  type PrefixCopyMethod,
} from "../native/engine-types.ts";
import { WORKER_KEY_LABEL } from "../shared/capability.ts";
import {
  DEV_ID_SECRET,
  DEV_MODE_FLAG,
  DEV_POOL_TOKEN,
  DEV_WORKER_TOKEN,
  isLoopbackHost,
  secretProblem,
} from "../shared/dev-secrets.ts";
import { LIMITS } from "../shared/limits.ts";
import { CHAT_FORMAT_NAMES, type ChatFormatName } from "./chat/family-names.ts";
import { loadSharedPrefixOptions, type SharedPrefixOptions } from "./continuation/shared-prefix/options.ts";
import type { TestPolicyName } from "./generate/sampling-policy.ts";
import { loadServerToolsConfig, type ServerToolsConfig } from "./server-tools/config.ts";

/**
 * The engine's options (context size, sequences, threads, gpu, flash attention, batch, KV type) plus
 * the worker's own. `contextSize` is settled once the model file is read (gpu-worker/model-load.ts).
 */
export interface WorkerConfig extends Omit<EngineOptions, "modelPath"> {
  workerId: string;
  host: string;
  /** h2c listener for native gRPC clients. */
  grpcPort: number;
  /** HTTP/1.1 listener for gRPC-Web / Connect (the edge in workerd). */
  httpPort: number;
  /** A GGUF path; undefined means "generate and serve the test model". */
  modelPath: string | undefined;
  testModelSize: "tiny" | "mid";
  chatFormat: ChatFormatName;
  /** harmony (gpt-oss) only: the fixed date of its system block (YYYY-MM-DD). */
  harmonyDate: string | undefined;
  /**
   * This worker's own capability key (FRONTIER_CAPABILITY_KEY, 32 bytes): the edge derives it from its
   * master secret and this worker's id and signs every call's capability with it. The worker holds no
   * secret shared with other workers or the edge: IDs are minted with the session key each request
   * carries, thinking is signed by the edge.
   */
  capabilityKey: Uint8Array;
  /** FRONTIER_TLS_CERT_FILE + FRONTIER_TLS_KEY_FILE (PEM): the RPC listeners serve TLS; undefined: plaintext. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** Bearer token every RPC must carry (shared with the edge), checked from the headers before any body is read. */
  workerToken: string;
  /** Largest request message the worker reads (FRONTIER_MAX_MESSAGE_MB); larger: RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  /** Test-only sampling policy. Never settable from a request. */
  testPolicy: TestPolicyName | undefined;
  /**
   * Interval of keep-alive events during long prefills, and the longest a Generate stream stays
   * silent (queued, restoring, planning): the edge's idle deadline must sit well above it.
   */
  keepAliveMs: number;
  /** Checkpoints, parked sessions and their index live here. */
  stateDir: string;
  /** Disk budget of the checkpoint store; 0 disables checkpoints (and parking). */
  checkpointBudgetBytes: number;
  /** FRONTIER_TENANT_CHECKPOINT_MB: what one tenant keeps when the store is over budget (default half the budget). */
  checkpointTenantShareBytes: number;
  /** A cold prefill saves an anchor at the end of system + tools when that is at least this long. */
  anchorMinTokens: number;
  /** Requests that may wait for a free sequence before OVERLOADED. */
  maxQueue: number;
  /** Of those, one tenant's (FRONTIER_TENANT_MAX_QUEUE; default a quarter of maxQueue). */
  maxQueuePerTenant: number;
  /**
   * Sequences one tenant's running turns may hold at once (FRONTIER_TENANT_MAX_SEQUENCES; default
   * sequences - 1, at least 1): the rest stay free for other tenants' turns.
   */
  tenantMaxSequences: number;
  /** A turn's wall-clock limit (FRONTIER_TURN_TIME_LIMIT_S, default 600; 0: none). */
  turnWallClockMs: number;
  /** How long a client may leave a turn's stream unread before the turn is cut (FRONTIER_STALL_TIMEOUT_S, default 30; 0: never). */
  stallMs: number;
  /** How long after a tool turn its checkpoint write starts; a sooner tool result cancels it. */
  checkpointDelayMs: number;
  /** The checkpoint store's directory; several workers may share one (shared directory, one index). */
  checkpointDir: string;
  /** FRONTIER_CHECKPOINT_DIR was set: other workers may use the same directory. */
  checkpointDirShared: boolean;
  /** FRONTIER_CHECKPOINT_SCRATCH_DIR: memory-backed directory for whole KV dumps and assembled states (default /dev/shm, else the OS temp dir). */
  checkpointScratchDir: string | undefined;
  /**
   * FRONTIER_CHECKPOINT_PLAIN_CACHE_MB (default 1024; 0: none): plain states of recent checkpoints
   * kept in the memory-backed scratch directory, so a restore soon after a park skips decrypting.
   */
  checkpointPlainCacheBytes: number;
  /** The S3-compatible bucket checkpoints are replicated to (workers on other hosts read them); undefined: none. */
  checkpointS3: CheckpointS3Config | undefined;
  /** Pool membership: the edge to heartbeat to (undefined: static configuration only). */
  edgeUrl: string | undefined;
  /** This worker's bearer token for the edge's pool endpoint (the edge keeps its SHA-256 in POOL_WORKER_TOKENS); "" without an edge. */
  poolToken: string;
  region: string;
  /** The gRPC-Web URL the edge should call; defaults to this worker's HTTP/1.1 listener. */
  advertiseUrl: string | undefined;
  heartbeatMs: number;
  /** The operations listener (/metrics, /healthz, /readyz); undefined: off. */
  ops: OpsListenerConfig | undefined;
  /** Hosted web_search / web_fetch providers and limits; undefined: none offered. */
  serverTools?: ServerToolsConfig | undefined;
  /** The ladder's shared-prefix rungs (FRONTIER_SHARED_PREFIX, FRONTIER_PREFIX_*, FRONTIER_PUBLIC_PREFIXES). */
  sharedPrefix: SharedPrefixOptions;
}

export interface OpsListenerConfig {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** Bearer token `/metrics` requires (never logged). */
  metricsToken: string;
}

export interface CheckpointS3Config {
  /** Endpoint plus bucket, path-style (`https://s3.eu-west-1.amazonaws.com/my-bucket`). */
  url: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix inside the bucket. */
  prefix: string;
  /** Replicated checkpoints older than this are deleted. */
  maxAgeMs: number;
}

export { DEV_ID_SECRET, DEV_WORKER_TOKEN } from "../shared/dev-secrets.ts";

/**
 * FRONTIER_CAPABILITY_KEY: base64url (or hex) of the 32 bytes the edge derives for this worker
 * (`npm run worker-key -- <worker id>` on the edge's side). Local development derives it from the
 * public development secret; outside it that derived key is refused like any development default.
 */
function capabilityKey(env: NodeJS.ProcessEnv, workerId: string): Uint8Array {
  const raw = (env.FRONTIER_CAPABILITY_KEY ?? "").trim();
  const dev = env[DEV_MODE_FLAG] === "1";
  const devKey = createHmac("sha256", DEV_ID_SECRET).update(`${WORKER_KEY_LABEL}${workerId}`).digest();
  if (raw === "") {
    if (dev) return new Uint8Array(devKey);
    throw new Error(
      `FRONTIER_CAPABILITY_KEY must be set (this worker's key from the edge); ${DEV_MODE_FLAG}=1 derives the development one`,
    );
  }
  const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, "hex") : Buffer.from(raw, "base64url");
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(raw) && key.toString("base64url") !== raw)) {
    throw new Error("FRONTIER_CAPABILITY_KEY must be 32 bytes, base64url (43 characters) or hex (64)");
  }
  if (key.equals(devKey) && !dev) {
    throw new Error(`FRONTIER_CAPABILITY_KEY is derived from the public development secret; ${DEV_MODE_FLAG}=1 only`);
  }
  return new Uint8Array(key);
}

/**
 * A secret from the environment. Outside local development (FRONTIER_DEV=1) a missing or short value,
 * a development default in any spelling, a placeholder or a value with whitespace at either end stops
 * the worker at start-up (shared/dev-secrets.ts `secretProblem`); in it, the development default fills in.
 */
function secret(env: NodeJS.ProcessEnv, name: string, devDefault: string): string {
  const raw = env[name] ?? "";
  const dev = isDev(env);
  if (raw === "") {
    if (dev) return devDefault;
    throw new Error(
      `${name} must be set (at least 16 characters); ${DEV_MODE_FLAG}=1 uses the local development default`,
    );
  }
  if (raw.length < 16) throw new Error(`${name} must be at least 16 characters`);
  const problem = dev ? undefined : secretProblem(raw);
  if (problem !== undefined) {
    throw new Error(`${name} ${problem}; set a secret of your own (or ${DEV_MODE_FLAG}=1 locally)`);
  }
  return raw;
}

/** FRONTIER_DEV: "1" is local development; anything but "1", "0" or unset is refused. */
function isDev(env: NodeJS.ProcessEnv): boolean {
  const flag = env[DEV_MODE_FLAG];
  if (flag !== undefined && flag !== "" && flag !== "1" && flag !== "0") {
    throw new Error(`${DEV_MODE_FLAG} must be "1" (local development) or unset, got "${flag}"`);
  }
  return flag === "1";
}

/**
 * Local development is loopback only: its secrets are public, so a worker with FRONTIER_DEV=1 that
 * listens on another interface (or 0.0.0.0 / ::) would serve anyone who can reach it.
 */
function refuseDevOffLoopback(env: NodeJS.ProcessEnv, binds: readonly [string, string][]): void {
  if (!isDev(env)) return;
  for (const [name, host] of binds) {
    if (!isLoopbackHost(host)) {
      throw new Error(
        `${DEV_MODE_FLAG}=1 (public development secrets) listens on loopback only, but ${name} is "${host}"; bind 127.0.0.1, or unset ${DEV_MODE_FLAG} and configure real secrets`,
      );
    }
  }
}

/** What the environment says: the context size is only the flag until the model file is read. */
export type WorkerEnvConfig = Omit<WorkerConfig, "contextSize"> & {
  /** FRONTIER_CONTEXT_SIZE; undefined: the file's context_length up to a cap (model-context.ts). */
  contextSizeFlag: number | undefined;
};

/**
 * The URL this worker's pool heartbeats advertise for the edge to call: FRONTIER_ADVERTISE_URL, else its
 * own HTTP/1.1 listener, `https://` when that listener serves TLS (a plaintext URL would point the edge
 * at a port that answers only TLS).
 */
export function advertisedUrl(config: Pick<WorkerConfig, "advertiseUrl" | "host" | "tls">, httpPort: number): string {
  return config.advertiseUrl ?? `${config.tls ? "https" : "http"}://${config.host}:${httpPort}`;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): WorkerEnvConfig {
  const testPolicy = env.FRONTIER_TEST_POLICY;
  if (testPolicy !== undefined && testPolicy !== "" && testPolicy !== "scripted-tools") {
    throw new Error(`FRONTIER_TEST_POLICY must be "scripted-tools" or unset, got "${testPolicy}"`);
  }
  if (testPolicy && !isDev(env)) {
    throw new Error(
      `FRONTIER_TEST_POLICY is a test-only sampling policy: it needs ${DEV_MODE_FLAG}=1 (local development)`,
    );
  }
  const host = env.FRONTIER_WORKER_HOST ?? "127.0.0.1";
  const ops = opsListener(env);
  refuseDevOffLoopback(env, [
    ["FRONTIER_WORKER_HOST", host],
    ...(ops ? [["FRONTIER_METRICS_HOST", ops.host] as [string, string]] : []),
  ]);
  const tls = tlsFiles(env);
  refusePlaintextOffLoopback(env, host, tls);
  const workerId = env.FRONTIER_WORKER_ID || "worker-1";
  const stateDir = env.FRONTIER_STATE_DIR || `.state/${workerId}`;
  const edgeUrl = httpUrl(env, "FRONTIER_EDGE_URL");
  return {
    workerId,
    host,
    grpcPort: intFrom(env, "FRONTIER_WORKER_GRPC_PORT", 50051),
    httpPort: intFrom(env, "FRONTIER_WORKER_HTTP_PORT", 50061),
    modelPath: env.FRONTIER_MODEL_PATH || undefined,
    testModelSize: oneOf(env, "FRONTIER_TEST_MODEL_SIZE", ["tiny", "mid"], "tiny"),
    contextSizeFlag: contextSizeFlag(env),
    sequences: intFrom(env, "FRONTIER_SEQUENCES", 4),
    threads: intFrom(env, "FRONTIER_THREADS", 1),
    gpu: oneOf(env, "FRONTIER_GPU", ["auto", "off"], "auto") === "off" ? false : "auto",
    flashAttention: oneOf(env, "FRONTIER_FLASH_ATTENTION", ["on", "off"], "off") === "on",
    kvCacheType: kvCacheType(env),
    batchSize: intFrom(env, "FRONTIER_BATCH_SIZE", 512),
    prefixCopy: oneOf<"auto" | PrefixCopyMethod>(env, "FRONTIER_PREFIX_COPY", ["auto", ...PREFIX_COPY_METHODS], "auto"),
    chatFormat: oneOf(env, "FRONTIER_CHAT_FORMAT", CHAT_FORMAT_NAMES, "auto"),
    harmonyDate: env.FRONTIER_HARMONY_DATE || undefined,
    capabilityKey: capabilityKey(env, workerId),
    tls,
    workerToken: secret(env, "FRONTIER_WORKER_TOKEN", DEV_WORKER_TOKEN),
    maxMessageBytes: maxMessageMb(env) * 1024 * 1024,
    testPolicy: testPolicy ? "scripted-tools" : undefined,
    keepAliveMs: intFrom(env, "FRONTIER_KEEPALIVE_MS", 1000),
    stateDir,
    checkpointBudgetBytes: intFrom(env, "FRONTIER_CHECKPOINT_BUDGET_MB", 4096) * 1024 * 1024,
    checkpointTenantShareBytes:
      intFrom(
        env,
        "FRONTIER_TENANT_CHECKPOINT_MB",
        Math.floor(intFrom(env, "FRONTIER_CHECKPOINT_BUDGET_MB", 4096) / 2),
      ) *
      1024 *
      1024,
    anchorMinTokens: intFrom(env, "FRONTIER_ANCHOR_MIN_TOKENS", 1024),
    maxQueue: intFrom(env, "FRONTIER_MAX_QUEUE", 64),
    maxQueuePerTenant: intFrom(
      env,
      "FRONTIER_TENANT_MAX_QUEUE",
      Math.max(1, Math.floor(intFrom(env, "FRONTIER_MAX_QUEUE", 64) / 4)),
    ),
    tenantMaxSequences: intFrom(
      env,
      "FRONTIER_TENANT_MAX_SEQUENCES",
      Math.max(1, intFrom(env, "FRONTIER_SEQUENCES", 4) - 1),
    ),
    turnWallClockMs: msFromSeconds(env, "FRONTIER_TURN_TIME_LIMIT_S", 600),
    stallMs: msFromSeconds(env, "FRONTIER_STALL_TIMEOUT_S", 30),
    checkpointDelayMs: intFrom(env, "FRONTIER_CHECKPOINT_DELAY_MS", 250),
    checkpointDir: env.FRONTIER_CHECKPOINT_DIR || `${stateDir}/checkpoints`,
    checkpointDirShared: Boolean(env.FRONTIER_CHECKPOINT_DIR),
    checkpointScratchDir: env.FRONTIER_CHECKPOINT_SCRATCH_DIR || undefined,
    checkpointPlainCacheBytes: intFrom(env, "FRONTIER_CHECKPOINT_PLAIN_CACHE_MB", 1024) * 1024 * 1024,
    checkpointS3: checkpointS3(env),
    edgeUrl,
    poolToken: edgeUrl ? secret(env, "FRONTIER_POOL_TOKEN", DEV_POOL_TOKEN) : "",
    region: env.FRONTIER_REGION || "local",
    advertiseUrl: httpUrl(env, "FRONTIER_ADVERTISE_URL"),
    heartbeatMs: intFrom(env, "FRONTIER_HEARTBEAT_MS", 2000) || 2000,
    ops,
    serverTools: loadServerToolsConfig(env),
    sharedPrefix: loadSharedPrefixOptions(env),
  };
}

/** FRONTIER_CONTEXT_SIZE: a positive integer, or unset (the model file decides). */
function contextSizeFlag(env: NodeJS.ProcessEnv): number | undefined {
  if (env.FRONTIER_CONTEXT_SIZE === undefined || env.FRONTIER_CONTEXT_SIZE === "") return undefined;
  const size = intFrom(env, "FRONTIER_CONTEXT_SIZE", 0);
  if (size < 2)
    throw new Error(`FRONTIER_CONTEXT_SIZE must be at least 2 KV cells, got "${env.FRONTIER_CONTEXT_SIZE}"`);
  return size;
}

/** FRONTIER_KV_TYPE (default f16). llama.cpp quantizes the V cache only with flash attention on. */
function kvCacheType(env: NodeJS.ProcessEnv): WorkerConfig["kvCacheType"] {
  const type = oneOf(env, "FRONTIER_KV_TYPE", KV_CACHE_TYPES, "f16");
  if (type !== "f16" && env.FRONTIER_FLASH_ATTENTION !== "on") {
    throw new Error(
      `FRONTIER_KV_TYPE=${type} needs FRONTIER_FLASH_ATTENTION=on (llama.cpp quantizes the V cache only with flash attention)`,
    );
  }
  return type;
}

/** FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE, both or neither (the files are read when the listeners start). */
function tlsFiles(env: NodeJS.ProcessEnv): WorkerConfig["tls"] {
  const certFile = env.FRONTIER_TLS_CERT_FILE ?? "";
  const keyFile = env.FRONTIER_TLS_KEY_FILE ?? "";
  if (certFile === "" && keyFile === "") return undefined;
  if (certFile === "" || keyFile === "") {
    throw new Error("FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE go together: set both (PEM files) or neither");
  }
  return { certFile, keyFile };
}

/**
 * Prompts, KV-derived tokens and the per-request keys travel on the RPC listener: outside local
 * development it listens in plaintext on loopback only (a TLS sidecar in front), unless TLS is
 * configured or the operator states that the network is private (FRONTIER_ALLOW_PLAINTEXT=1).
 */
function refusePlaintextOffLoopback(env: NodeJS.ProcessEnv, host: string, tls: WorkerConfig["tls"]): void {
  const allow = env.FRONTIER_ALLOW_PLAINTEXT ?? "";
  if (allow !== "" && allow !== "1" && allow !== "0") {
    throw new Error(`FRONTIER_ALLOW_PLAINTEXT must be "1" or unset, got "${allow}"`);
  }
  if (tls || isLoopbackHost(host) || isDev(env) || allow === "1") return;
  throw new Error(
    `FRONTIER_WORKER_HOST is "${host}" without TLS: set FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE, bind 127.0.0.1 behind a TLS-terminating proxy, or set FRONTIER_ALLOW_PLAINTEXT=1 if this network is private and encrypted (docs/deployment.md, "TLS to the workers")`,
  );
}

/** By default twice the edge's largest request body (shared/limits.ts), far above any request the edge sends. */
function maxMessageMb(env: NodeJS.ProcessEnv): number {
  const mb = intFrom(env, "FRONTIER_MAX_MESSAGE_MB", (2 * LIMITS.maxBodyBytes) / (1024 * 1024));
  if (mb < 1) throw new Error("FRONTIER_MAX_MESSAGE_MB must be at least 1");
  return mb;
}

/** FRONTIER_METRICS_PORT turns the listener on; it then needs FRONTIER_METRICS_TOKEN. */
function opsListener(env: NodeJS.ProcessEnv): OpsListenerConfig | undefined {
  if (env.FRONTIER_METRICS_PORT === undefined || env.FRONTIER_METRICS_PORT === "") return undefined;
  const metricsToken = env.FRONTIER_METRICS_TOKEN ?? "";
  if (metricsToken.length < 16) {
    throw new Error("FRONTIER_METRICS_PORT needs FRONTIER_METRICS_TOKEN (at least 16 characters)");
  }
  const problem = isDev(env) ? undefined : secretProblem(metricsToken);
  if (problem !== undefined) throw new Error(`FRONTIER_METRICS_TOKEN ${problem}; set a token of your own`);
  return {
    host: env.FRONTIER_METRICS_HOST || env.FRONTIER_WORKER_HOST || "127.0.0.1",
    port: intFrom(env, "FRONTIER_METRICS_PORT", 0),
    metricsToken,
  };
}

function checkpointS3(env: NodeJS.ProcessEnv): CheckpointS3Config | undefined {
  const url = httpUrl(env, "FRONTIER_CHECKPOINT_S3_URL");
  if (!url) return undefined;
  const accessKeyId = env.FRONTIER_CHECKPOINT_S3_ACCESS_KEY_ID ?? "";
  const secretAccessKey = env.FRONTIER_CHECKPOINT_S3_SECRET_ACCESS_KEY ?? "";
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      "FRONTIER_CHECKPOINT_S3_URL needs FRONTIER_CHECKPOINT_S3_ACCESS_KEY_ID and FRONTIER_CHECKPOINT_S3_SECRET_ACCESS_KEY",
    );
  }
  if (new URL(url).pathname.replace(/\/+$/, "") === "") {
    throw new Error("FRONTIER_CHECKPOINT_S3_URL must name the bucket: http(s)://<endpoint>/<bucket>");
  }
  return {
    url,
    region: env.FRONTIER_CHECKPOINT_S3_REGION || "us-east-1",
    accessKeyId,
    secretAccessKey,
    prefix: env.FRONTIER_CHECKPOINT_S3_PREFIX ?? "",
    maxAgeMs: (intFrom(env, "FRONTIER_CHECKPOINT_S3_MAX_AGE_H", 168) || 168) * 3_600_000,
  };
}

function httpUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must be an http(s) URL`);
  return raw.replace(/\/+$/, "");
}

/** Seconds (fractions allowed) as whole milliseconds. */
function msFromSeconds(env: NodeJS.ProcessEnv, name: string, fallbackSeconds: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallbackSeconds * 1000;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new Error(`${name} must be a non-negative number of seconds, got "${raw}"`);
  return Math.round(value * 1000);
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new Error(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}
