import { defineConfig } from "vitest/config";

/** Multi-process tier: a real GPU worker process and the edge in workerd, over real sockets. */
export default defineConfig({
  test: {
    include: ["test/integration/**/*.test.ts"],
    globalSetup: ["test/integration/global-setup.ts"],
    environment: "node",
    pool: "forks",
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
