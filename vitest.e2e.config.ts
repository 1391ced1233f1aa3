import { defineConfig } from "vitest/config";
import { sdkPackagesFrom } from "./test/support/sdk-packages-plugin.ts";

/**
 * Real clients (SDKs and CLIs) against the real local stack. `FRONTIER_CLIENTS_DIR` (set by
 * `npm run clients:latest`) swaps the pinned clients for the ones installed in that folder.
 */
const clientsDir = process.env.FRONTIER_CLIENTS_DIR;

export default defineConfig({
  plugins: clientsDir ? [sdkPackagesFrom(clientsDir)] : [],
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
