/**
 * docs/operations/configuration.md lists every setting the code reads. The settings are read out of
 * the sources themselves: each `process.env.X` / `env.X` / `vars.X` (and `["X"]`) of an upper-case
 * name, each `"FRONTIER_…"` literal handed to a reader (intFrom, oneOf, secret…), each field of the
 * edge's `*Vars` interfaces (edge/config/), and each key of wrangler.toml's `[vars]` (commented-out
 * ones included). A setting missing from the reference fails here, naming the file that reads it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../../scripts/stack.ts";

/** Where settings are read: the edge, the worker, the engine, shared code, and the operator scripts. */
const SOURCE_DIRS = ["edge", "gpu-worker", "native", "shared"];
const OPERATOR_SCRIPTS = [
  "scripts/start.ts",
  "scripts/drain.ts",
  "scripts/pool-credentials.ts",
  "scripts/worker-key.ts",
  "scripts/public-prefix.ts",
  "scripts/stack.ts",
];

const NAME = "[A-Z][A-Z0-9_]{2,}";
const READS = [
  new RegExp(`\\b(?:process\\.env|env|vars)\\.(${NAME})\\b`, "g"),
  new RegExp(`\\b(?:process\\.env|env|vars)\\[\\s*"(${NAME})"\\s*\\]`, "g"),
  /"(FRONTIER_[A-Z0-9_]+)"/g,
];
/** A field of an edge `*Vars` interface: `  NAME?: string;`. */
const VARS_FIELD = new RegExp(`^\\s+(${NAME})\\??: string;`, "gm");

function tsFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(REPO_ROOT, path)).isDirectory()) return name === "gen" ? [] : tsFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Setting → the first file that reads it. */
function settingsReadByCode(): Map<string, string> {
  const found = new Map<string, string>();
  const note = (name: string, file: string) => {
    if (!found.has(name)) found.set(name, file);
  };
  for (const file of [...SOURCE_DIRS.flatMap(tsFiles), ...OPERATOR_SCRIPTS]) {
    const text = readFileSync(join(REPO_ROOT, file), "utf8");
    for (const pattern of READS) for (const match of text.matchAll(pattern)) note(match[1] as string, file);
    if (file.startsWith("edge/config/")) for (const match of text.matchAll(VARS_FIELD)) note(match[1] as string, file);
  }
  const toml = readFileSync(join(REPO_ROOT, "wrangler.toml"), "utf8");
  const vars = toml.slice(toml.indexOf("[vars]"));
  for (const match of vars.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)\s*=/gm)) note(match[1] as string, "wrangler.toml");
  return found;
}

function documented(): Set<string> {
  const text = readFileSync(join(REPO_ROOT, "docs/operations/configuration.md"), "utf8");
  return new Set([...text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1] as string));
}

describe("docs/operations/configuration.md", () => {
  it("finds the settings the parsers read (the extraction works)", () => {
    const read = settingsReadByCode();
    for (const name of [
      "WORKER_IDS",
      "WORKER_URLS",
      "ID_SECRET",
      "FRONTIER_SEQUENCES",
      "FRONTIER_FETCH_PORTS",
      "WORKERS",
    ])
      expect(read.has(name), name).toBe(true);
    expect(read.size).toBeGreaterThan(90);
  });

  it("lists every setting the code reads", () => {
    const listed = documented();
    const missing = [...settingsReadByCode()]
      .filter(([name]) => !listed.has(name))
      .map(([name, file]) => `${name} (read in ${relative(".", file)})`);
    expect(missing).toEqual([]);
  });
});
