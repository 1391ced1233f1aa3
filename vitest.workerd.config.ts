import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { DEV_DIGESTS, DEV_ID_SECRET, DEV_WORKER_TOKEN } from "./shared/dev-secrets.ts";

/**
 * In-workerd tests of the edge (routes, auth, validation, SessionDO, routing). No GPU worker:
 * WORKER_URLS points at a closed port, and tests that need a worker stub `fetch` with a fake
 * gRPC-Web responder.
 */
export default defineConfig({
  plugins: [
    cloudflareTest({
      main: "./edge/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // The secrets are not in wrangler.toml: local development passes the public defaults.
        bindings: {
          FRONTIER_DEV: "1",
          ID_SECRET: DEV_ID_SECRET,
          WORKER_TOKEN: DEV_WORKER_TOKEN,
          POOL_TOKEN_SHA256: DEV_DIGESTS.pool,
          ADMIN_TOKEN_SHA256: DEV_DIGESTS.admin,
          // A worker with a token of its own (sha256 of "token-of-worker-bound").
          POOL_WORKER_TOKENS: JSON.stringify({
            "worker-bound": "c17853c629451faf6ca9f63ff26d1487dc876c86e21a1bb32435741e19387b8c",
          }),
          // The fake workers of test/workerd/pool.test.ts advertise 10.0.x.x.
          POOL_ALLOWED_WORKER_URLS: "127.0.0.0/8,10.0.0.0/16",
          WORKER_URLS: "http://127.0.0.1:1",
          // sk-frontier-local -> local, sk-test-other -> other
          API_KEYS: JSON.stringify({
            c383444890ea30a3256c522f6be0b5afb155931118fb6a399ef4c61c5a89784a: "local",
            a2702a64e6ba677c16d0d10ecaaf5cac603158ea18941d26ca9dd3b97a8cb8e2: "other",
            // sk-test-limited -> limited, sk-test-solo -> solo (test/workerd/tenant-limits.test.ts)
            "716d9331d7ad666bd3c016548a20f4af914f281255463802599abfd141e4609a": "limited",
            "90dcd6b7d8e3d21f6cb7244e6c1ff1f543df82b56cd6c55ed1895c98daa01ea8": "solo",
          }),
          TENANT_LIMITS: JSON.stringify({
            limited: { concurrent: 0, per_minute: 3 },
            solo: { concurrent: 1, per_minute: 0 },
          }),
          KEEPALIVE_MS: "100",
          HEADER_WAIT_MS: "300",
          // Short Generate deadlines: test/workerd/worker-failures.test.ts freezes fake workers (no fake pauses longer).
          WORKER_CONNECT_TIMEOUT_MS: "2500",
          WORKER_FIRST_EVENT_TIMEOUT_MS: "2500",
          WORKER_IDLE_TIMEOUT_MS: "2500",
        },
      },
    }),
  ],
  test: {
    include: ["test/workerd/**/*.test.ts"],
    setupFiles: ["test/workerd/background-settled.ts"],
    testTimeout: 30_000,
  },
});
