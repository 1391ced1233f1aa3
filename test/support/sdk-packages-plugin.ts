/**
 * The e2e config's Vite plugin for `FRONTIER_CLIENTS_DIR`: the SDK packages tests import resolve
 * from that folder's node_modules instead of the repo's. (Kept free of other repo imports: tools
 * such as knip load the config on their own.)
 */
import { join } from "node:path";
import type { Plugin } from "vite";

/** The SDK packages tests import as modules (the CLIs run as processes). */
export const SDK_PACKAGES = ["openai", "@anthropic-ai/sdk", "@openai/agents", "@google/genai"] as const;

/** True when `source` names one of the SDK packages or a subpath of one. */
export function isSdkImport(source: string): boolean {
  return SDK_PACKAGES.some((p) => source === p || source.startsWith(`${p}/`));
}

/**
 * A Vite plugin resolving the SDK packages (and their subpaths, through their `exports`) as if they
 * were imported from a file in `dir`: the copy in `dir/node_modules` wins over the repo's.
 */
export function sdkPackagesFrom(dir: string): Plugin {
  const importer = join(dir, "package.json");
  return {
    name: "frontier-sdk-packages-from",
    enforce: "pre",
    async resolveId(source, _importer, options) {
      if (!isSdkImport(source)) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (!resolved) throw new Error(`${source} is not installed in ${dir}`);
      return resolved;
    },
  };
}
