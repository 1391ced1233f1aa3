import { defineConfig } from "vitest/config";

/** The fuzz tier: seeded property-based bodies against its own real local stack (test/fuzz/). */
export default defineConfig({
  test: {
    include: ["test/fuzz/**/*.test.ts"],
    environment: "node",
    pool: "forks",
    fileParallelism: false,
    testTimeout: 30 * 60_000,
    hookTimeout: 240_000,
  },
});
