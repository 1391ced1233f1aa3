import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

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
        bindings: {
          WORKER_URLS: "http://127.0.0.1:1",
          // sk-frontier-local -> local, sk-test-other -> other
          API_KEYS: JSON.stringify({
            c383444890ea30a3256c522f6be0b5afb155931118fb6a399ef4c61c5a89784a: "local",
            a2702a64e6ba677c16d0d10ecaaf5cac603158ea18941d26ca9dd3b97a8cb8e2: "other",
          }),
          KEEPALIVE_MS: "100",
          HEADER_WAIT_MS: "300",
        },
      },
    }),
  ],
  test: {
    include: ["test/workerd/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
