/**
 * The public development defaults of every secret. They are valid only in local development
 * (`FRONTIER_DEV=1`, which `npm start`, the tests and the bench set through scripts/stack.ts): outside
 * it the edge refuses every request and the worker refuses to start when one of them is configured.
 * Deployments set their own secrets (README "Configuration").
 */

/** The environment flag (worker) / var (edge) that allows the development defaults. */
export const DEV_MODE_FLAG = "FRONTIER_DEV";

/** Keys the MAC of every ID Frontier mints (edge ID_SECRET = worker FRONTIER_ID_SECRET). */
export const DEV_ID_SECRET = "frontier-dev-id-secret-change-me";
/** The bearer token the workers require (edge WORKER_TOKEN = worker FRONTIER_WORKER_TOKEN). */
export const DEV_WORKER_TOKEN = "frontier-dev-worker-token-change-me";
/** The pool registration token every development worker shares (edge POOL_TOKEN_SHA256 is its digest). */
export const DEV_POOL_TOKEN = "frontier-dev-pool-token-change-me";
/** The admin bearer token (edge ADMIN_TOKEN_SHA256 is its digest). */
export const DEV_ADMIN_TOKEN = "frontier-dev-admin-token-change-me";
/** The local API key (tenant `local`). */
export const DEV_API_KEY = "sk-frontier-local";

/** SHA-256 hex digests of the development tokens, as the edge is configured with them. */
export const DEV_DIGESTS = {
  pool: "d83bfe6e058802a48d8f24e784c9039cbe6464dfc6f23e19525d0605bf807a54",
  admin: "41371453eedb0c9d1fefb5ff4366ce654511c28f1f5792bc38abbc0e96f2b212",
  apiKey: "c383444890ea30a3256c522f6be0b5afb155931118fb6a399ef4c61c5a89784a",
} as const;
