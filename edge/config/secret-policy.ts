/**
 * No development secret in a deployment: outside local development (`FRONTIER_DEV=1`) a configured
 * value equal to one of the public development defaults is a ConfigError, so the edge refuses every
 * request ("The server is misconfigured", the reason in the log) instead of accepting forgeable IDs,
 * a public worker token or a public pool/admin token.
 */
import { DEV_DIGESTS, DEV_ID_SECRET, DEV_MODE_FLAG, DEV_WORKER_TOKEN } from "../../shared/dev-secrets.ts";
import { ConfigError } from "../core/config-values.ts";

export interface SecretVars {
  /** "1": local development; the development defaults are allowed (and only then). */
  FRONTIER_DEV?: string;
  ID_SECRET?: string;
  WORKER_TOKEN?: string;
  API_KEYS?: string;
  POOL_TOKEN_SHA256?: string;
  ADMIN_TOKEN_SHA256?: string;
}

export function isDevMode(vars: SecretVars): boolean {
  return vars.FRONTIER_DEV === "1";
}

export function refuseDevSecrets(vars: SecretVars): void {
  if (isDevMode(vars)) return;
  const hint = `set your own (wrangler secret put), or ${DEV_MODE_FLAG}=1 for local development`;
  if (vars.ID_SECRET === DEV_ID_SECRET) throw new ConfigError(`ID_SECRET is the public development default; ${hint}`);
  if (vars.WORKER_TOKEN === DEV_WORKER_TOKEN) {
    throw new ConfigError(`WORKER_TOKEN is the public development default; ${hint}`);
  }
  if (vars.ADMIN_TOKEN_SHA256?.trim().toLowerCase() === DEV_DIGESTS.admin) {
    throw new ConfigError(`ADMIN_TOKEN_SHA256 is the digest of the public development token; ${hint}`);
  }
  if (vars.POOL_TOKEN_SHA256 !== undefined && vars.POOL_TOKEN_SHA256.trim() !== "") {
    throw new ConfigError(
      "POOL_TOKEN_SHA256 (one token for every worker) is for local development only; give each worker its own token in POOL_WORKER_TOKENS",
    );
  }
  if (vars.API_KEYS?.toLowerCase().includes(DEV_DIGESTS.apiKey)) {
    throw new ConfigError(`API_KEYS holds the public local development key (sk-frontier-local); ${hint}`);
  }
}
