/**
 * The worker's secrets and the guards that keep local development's public ones local: the
 * capability key, the shared tokens, loopback-only development, no plaintext off loopback.
 */
import { createHmac } from "node:crypto";
import { WORKER_KEY_LABEL } from "../../shared/capability.ts";
import { DEV_ID_SECRET, DEV_MODE_FLAG, isLoopbackHost, secretProblem } from "../../shared/dev-secrets.ts";
import { isDev } from "./env-values.ts";

/**
 * FRONTIER_CAPABILITY_KEY: base64url (or hex) of the 32 bytes the edge derives for this worker
 * (`npm run worker-key -- <worker id>` on the edge's side). Local development derives it from the
 * public development secret; outside it that derived key is refused like any development default.
 */
export function capabilityKey(env: NodeJS.ProcessEnv, workerId: string): Uint8Array {
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
export function secret(env: NodeJS.ProcessEnv, name: string, devDefault: string): string {
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

/**
 * Local development is loopback only: its secrets are public, so a worker with FRONTIER_DEV=1 that
 * listens on another interface (or 0.0.0.0 / ::) would serve anyone who can reach it.
 */
export function refuseDevOffLoopback(env: NodeJS.ProcessEnv, binds: readonly [string, string][]): void {
  if (!isDev(env)) return;
  for (const [name, host] of binds) {
    if (!isLoopbackHost(host)) {
      throw new Error(
        `${DEV_MODE_FLAG}=1 (public development secrets) listens on loopback only, but ${name} is "${host}"; bind 127.0.0.1, or unset ${DEV_MODE_FLAG} and configure real secrets`,
      );
    }
  }
}

/**
 * Prompts, KV-derived tokens and the per-request keys travel on the RPC listener: outside local
 * development it listens in plaintext on loopback only (a TLS sidecar in front), unless TLS is
 * configured or the operator states that the network is private (FRONTIER_ALLOW_PLAINTEXT=1).
 */
export function refusePlaintextOffLoopback(
  env: NodeJS.ProcessEnv,
  host: string,
  tls: { certFile: string; keyFile: string } | undefined,
): void {
  const allow = env.FRONTIER_ALLOW_PLAINTEXT ?? "";
  if (allow !== "" && allow !== "1" && allow !== "0") {
    throw new Error(`FRONTIER_ALLOW_PLAINTEXT must be "1" or unset, got "${allow}"`);
  }
  if (tls || isLoopbackHost(host) || isDev(env) || allow === "1") return;
  throw new Error(
    `FRONTIER_WORKER_HOST is "${host}" without TLS: set FRONTIER_TLS_CERT_FILE and FRONTIER_TLS_KEY_FILE, bind 127.0.0.1 behind a TLS-terminating proxy, or set FRONTIER_ALLOW_PLAINTEXT=1 if this network is private and encrypted (docs/deployment.md, "TLS to the workers")`,
  );
}
