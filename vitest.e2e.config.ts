import { defineConfig } from "vitest/config";

/** Real clients (Anthropic SDK, Claude Code CLI) against the real local stack. */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.test.ts"],
    globalSetup: ["test/e2e/global-setup.ts"],
    environment: "node",
    pool: "forks",
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 180_000,
  },
});
