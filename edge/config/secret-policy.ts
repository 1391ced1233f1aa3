/**
 * No development secret in a deployment: outside local development (`FRONTIER_DEV=1`) a configured
 * secret that is a public development default in any spelling (case, separators, whitespace), a
 * placeholder (`changeme`, `<secret>`, `xxx…`, `your-token-here`) or has whitespace at either end is a
 * ConfigError, and so is a token digest of a development token or a placeholder; the edge then refuses
 * every request ("The server is misconfigured", the reason in the log) instead of accepting forgeable
 * IDs, a public worker token or a public pool/admin token. `FRONTIER_DEV` itself is `1` or unset.
 */
import { DEV_MODE_FLAG, PUBLIC_TOKEN_DIGESTS, secretProblem } from "../../shared/dev-secrets.ts";
import { ConfigError } from "../core/config-values.ts";

export interface SecretVars {
  /** "1": local development; the development defaults are allowed (and only then). */
  FRONTIER_DEV?: string;
  ID_SECRET?: string;
  WORKER_TOKEN?: string;
  API_KEYS?: string;
  POOL_TOKEN_SHA256?: string;
  ADMIN_TOKEN_SHA256?: string;
  POOL_WORKER_TOKENS?: string;
}

export function isDevMode(vars: SecretVars): boolean {
  const flag = vars.FRONTIER_DEV;
  if (flag !== undefined && flag !== "" && flag !== "1" && flag !== "0") {
    throw new ConfigError(`${DEV_MODE_FLAG} must be "1" (local development) or unset, got "${flag}"`);
  }
  return flag === "1";
}

export function refuseDevSecrets(vars: SecretVars): void {
  if (isDevMode(vars)) return;
  const hint = `set your own (wrangler secret put), or ${DEV_MODE_FLAG}=1 for local development`;
  for (const name of ["ID_SECRET", "WORKER_TOKEN"] as const) {
    const value = vars[name];
    const problem = value === undefined || value === "" ? undefined : secretProblem(value);
    if (problem !== undefined) throw new ConfigError(`${name} ${problem}; ${hint}`);
  }
  if (isPublicDigest(vars.ADMIN_TOKEN_SHA256)) {
    throw new ConfigError(`ADMIN_TOKEN_SHA256 is the digest of a development or placeholder token; ${hint}`);
  }
  if (vars.POOL_TOKEN_SHA256 !== undefined && vars.POOL_TOKEN_SHA256.trim() !== "") {
    throw new ConfigError(
      "POOL_TOKEN_SHA256 (one token for every worker) is for local development only; give each worker its own token in POOL_WORKER_TOKENS",
    );
  }
  if (digestsIn(vars.POOL_WORKER_TOKENS).some(isPublicDigest)) {
    throw new ConfigError(`POOL_WORKER_TOKENS holds the digest of a development or placeholder token; ${hint}`);
  }
  if (digestsIn(vars.API_KEYS).some(isPublicDigest)) {
    throw new ConfigError(
      `API_KEYS holds the digest of a development key (sk-frontier-local in some spelling) or a placeholder; ${hint}`,
    );
  }
}

/** Every 64-hex-digit run in a JSON var (its keys or values). */
function digestsIn(raw: string | undefined): string[] {
  return (raw ?? "").toLowerCase().match(/[0-9a-f]{64}/g) ?? [];
}

function isPublicDigest(digest: string | undefined): boolean {
  return digest !== undefined && PUBLIC_TOKEN_DIGESTS.has(digest.trim().toLowerCase());
}
