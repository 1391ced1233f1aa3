import { defineConfig } from "vitest/config";

/** Node-side tiers: pure unit tests, engine tests (tiny model), integration and end-to-end. */
export default defineConfig({
  test: {
    environment: "node",
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 300_000,
    fileParallelism: false,
  },
});
