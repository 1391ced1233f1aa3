/**
 * `npm run worker-key -- <worker id>` (scripts/worker-key.ts, run as a real process): prints the
 * worker's FRONTIER_CAPABILITY_KEY = base64url(HMAC-SHA256(ID_SECRET, "frontier/worker/" + id)),
 * which the worker's config accepts and which verifies the capabilities the edge signs for that id;
 * the secret comes from the environment or stdin, never argv; a development secret outside dev, a
 * short one and a bad id are refused.
 */
import { spawnSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../gpu-worker/config.ts";
import { REPO_ROOT } from "../../../scripts/stack.ts";
import { NO_SCOPE, signCapability, verifyCapability, workerKey } from "../../../shared/capability.ts";
import { DEV_ID_SECRET } from "../../../shared/dev-secrets.ts";

const SECRET = "kq3Yv0pV_8N2mRzT7cXwLd4h-edge-only";

function workerKeyScript(args: string[], env: Record<string, string>, input = "") {
  const { PATH, HOME } = process.env;
  const run = spawnSync(process.execPath, ["--import", "tsx", join(REPO_ROOT, "scripts/worker-key.ts"), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: PATH ?? "", HOME: HOME ?? "", ...env },
    input,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr };
}

describe("npm run worker-key", () => {
  it("prints HMAC-SHA256(ID_SECRET, frontier/worker/<id>) that the worker accepts and the edge's signatures verify under", async () => {
    const out = workerKeyScript(["gpu-host-1"], { ID_SECRET: SECRET });
    expect(out.status).toBe(0);
    const expected = createHmac("sha256", SECRET).update("frontier/worker/gpu-host-1").digest("base64url");
    expect(out.stdout).toBe(expected);
    const config = loadConfig({
      FRONTIER_WORKER_ID: "gpu-host-1",
      FRONTIER_CAPABILITY_KEY: out.stdout,
      FRONTIER_WORKER_TOKEN: "Wt9dQ2xLr7Vb0ZpK4sHn6Ty1",
    });
    const edgeKey = await workerKey(SECRET, "gpu-host-1");
    const expires = Math.floor(Date.now() / 1000) + 60;
    const capability = { worker: "gpu-host-1", tenant: NO_SCOPE, session: NO_SCOPE, ops: ["health" as const], expires };
    const signed = await signCapability(edgeKey, capability);
    const check = { worker: "gpu-host-1", nowSeconds: Math.floor(Date.now() / 1000) };
    expect(await verifyCapability(config.capabilityKey, signed, check)).toMatchObject({ worker: "gpu-host-1" });
    // Another worker's id gives another key.
    expect(workerKeyScript(["gpu-host-2"], { ID_SECRET: SECRET }).stdout).not.toBe(expected);
  });

  it("reads the secret from stdin when the environment has none", () => {
    const out = workerKeyScript(["gpu-host-1"], {}, `${SECRET}\n`);
    expect(out.status).toBe(0);
    expect(out.stdout).toBe(createHmac("sha256", SECRET).update("frontier/worker/gpu-host-1").digest("base64url"));
  });

  it("takes no secret on the command line and refuses weak secrets and bad ids", () => {
    const argv = workerKeyScript(["gpu-host-1", "--secret", SECRET], {});
    expect(argv.status).not.toBe(0);
    expect(argv.stdout).toBe("");
    expect(workerKeyScript(["gpu-host-1", SECRET], {}).status).toBe(2);
    const dev = workerKeyScript(["gpu-host-1"], { ID_SECRET: DEV_ID_SECRET });
    expect(dev.status).toBe(1);
    expect(dev.stderr).toMatch(/development default/);
    expect(workerKeyScript(["gpu-host-1"], { ID_SECRET: DEV_ID_SECRET, FRONTIER_DEV: "1" }).status).toBe(0);
    expect(workerKeyScript(["gpu-host-1"], { ID_SECRET: "short" }).stderr).toMatch(/at least 16/);
    expect(workerKeyScript(["gpu host/1"], { ID_SECRET: SECRET }).status).toBe(2);
    expect(workerKeyScript(["gpu-host-1"], {}, "").stderr).toMatch(/no ID_SECRET/);
  });
});
