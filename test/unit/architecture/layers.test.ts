/**
 * The rules `npm run check` holds the house to (.dependency-cruiser.cjs) refuse what they say they
 * refuse: each case writes a tiny tree with one offending import and cruises it with the real rules.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cruise } from "dependency-cruiser";
import { afterAll, describe, expect, it } from "vitest";

const ruleSet = createRequire(import.meta.url)("../../../.dependency-cruiser.cjs");
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The rule names violated by a tree of `files` (path → source). */
async function violations(files: Record<string, string>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), "frontier-layers-"));
  roots.push(root);
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  const top = [...new Set(Object.keys(files).map((p) => p.split("/")[0] ?? ""))];
  const result = await cruise(top, {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: ruleSet.forbidden },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
  });
  if (typeof result.output === "string") throw new Error(result.output);
  return result.output.summary.violations.map((v) => v.rule.name).sort();
}

describe("the dependency rules", () => {
  it("pass a tree that imports only downward", async () => {
    expect(
      await violations({
        "edge/core/log.ts": "export const log = 1;\n",
        "edge/turn/pipeline.ts": 'import { log } from "../core/log.ts";\nexport const p = log;\n',
        "edge/router.ts": 'import { p } from "./turn/pipeline.ts";\nexport const r = p;\n',
      }),
    ).toEqual([]);
  });

  it("refuse an upward import in the edge, type-only included", async () => {
    expect(
      await violations({
        "edge/core/log.ts": 'import type { P } from "../turn/pipeline.ts";\nexport type L = P;\n',
        "edge/turn/pipeline.ts": "export type P = number;\n",
      }),
    ).toEqual(["edge-core-no-upward"]);
  });

  it("refuse a lower room importing edge/'s top level (Env)", async () => {
    expect(
      await violations({
        "edge/env.ts": "export interface Env { x: number }\n",
        "edge/session/route.ts": 'import type { Env } from "../env.ts";\nexport type E = Env;\n',
      }),
    ).toEqual(["edge-session-no-upward"]);
  });

  it("refuse a cycle", async () => {
    expect(
      await violations({
        "edge/pool/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
        "edge/pool/b.ts": 'import { a } from "./a.ts";\nexport const b = () => a;\n',
      }),
    ).toContain("no-circular");
  });

  it("keep the protocol adapters apart and the two sides behind gRPC", async () => {
    expect(
      await violations({
        "edge/protocols/chat/stream.ts": 'import { x } from "../messages/x.ts";\nexport const s = x;\n',
        "edge/protocols/messages/x.ts": "export const x = 1;\n",
        "gpu-worker/main.ts": 'import { y } from "../edge/core/y.ts";\nexport const m = y;\n',
        "edge/core/y.ts": "export const y = 1;\n",
      }),
    ).toEqual(["edge-protocols-chat-alone", "worker-not-edge"]);
  });

  it("hold the worker's layers too (chat lowest, the turn above the rooms it strings together)", async () => {
    expect(
      await violations({
        "gpu-worker/chat/family.ts": 'import type { T } from "../turn/turn.ts";\nexport type F = T;\n',
        "gpu-worker/turn/turn.ts": 'import { log } from "../log.ts";\nexport type T = typeof log;\n',
        "gpu-worker/log.ts": "export const log = 1;\n",
        "gpu-worker/pool/report.ts": 'import type { S } from "../service.ts";\nexport type R = S;\n',
        "gpu-worker/service.ts": "export type S = number;\n",
      }),
    ).toEqual(["gpu-worker-chat-no-upward", "gpu-worker-pool-no-upward"]);
  });
});
