/**
 * Issue 42, "worker RSS flat across waves": the worker's RSS grew with glibc's per-thread arenas and
 * V8's young generation, both sized when the process starts (docs/operations/worker-memory.md). Every
 * launcher starts a worker with the settings that bound them: the local stack (withWorkerMemorySettings)
 * and each deployment file; the worker's ready line names the ones missing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import {
  missingWorkerMemorySettings,
  WORKER_MEMORY_ENV,
  WORKER_V8_FLAG,
  withWorkerMemorySettings,
} from "../../../gpu-worker/config/process-memory.ts";
import { REPO_ROOT } from "../../../scripts/stack.ts";

const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

/** What every deployment must set: the glibc variables and NODE_OPTIONS carrying the V8 flag. */
const EXPECTED = { ...WORKER_MEMORY_ENV, NODE_OPTIONS: WORKER_V8_FLAG };

describe("the worker's memory settings", () => {
  it("are added to a launcher's environment, an operator's own values kept", () => {
    expect(withWorkerMemorySettings({ PATH: "/bin" })).toEqual({ PATH: "/bin", ...EXPECTED });
    const own = withWorkerMemorySettings({ MALLOC_ARENA_MAX: "4", NODE_OPTIONS: "--enable-source-maps" });
    expect(own.MALLOC_ARENA_MAX).toBe("4");
    expect(own.MALLOC_MMAP_THRESHOLD_).toBe("131072");
    expect(own.NODE_OPTIONS).toBe(`--enable-source-maps ${WORKER_V8_FLAG}`);
    expect(withWorkerMemorySettings({ NODE_OPTIONS: "--max-semi-space-size=32" }).NODE_OPTIONS).toBe(
      "--max-semi-space-size=32",
    );
  });

  it("missing ones are named (the worker's ready line), flags from the command line counted", () => {
    expect(missingWorkerMemorySettings({}, [])).toEqual([...Object.keys(WORKER_MEMORY_ENV), WORKER_V8_FLAG]);
    expect(missingWorkerMemorySettings(withWorkerMemorySettings({}), [])).toEqual([]);
    expect(missingWorkerMemorySettings({ ...WORKER_MEMORY_ENV }, ["--max-semi-space-size=8"])).toEqual([]);
  });

  it("deploy/container/Containerfile sets them", () => {
    const env: Record<string, string> = {};
    const lines = read("deploy/container/Containerfile").replace(/\\\n/g, " ").split("\n");
    for (const line of lines.filter((l) => l.startsWith("ENV "))) {
      for (const [, key, value] of line.matchAll(/([A-Z_]+)=(\S+)/g)) env[key ?? ""] = value ?? "";
    }
    expect(env).toMatchObject(EXPECTED);
  });

  it("deploy/systemd/frontier-worker.service sets them", () => {
    const env = Object.fromEntries(
      read("deploy/systemd/frontier-worker.service")
        .split("\n")
        .filter((l) => l.startsWith("Environment="))
        .map((l) => l.slice("Environment=".length))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env).toMatchObject(EXPECTED);
  });

  it("deploy/k8s/worker.yaml sets them on the worker container", () => {
    type Container = { name: string; env?: { name: string; value?: string }[] };
    const set = parseAllDocuments(read("deploy/k8s/worker.yaml"))
      .map((d) => d.toJS() as { kind: string; spec: { template?: { spec: { containers?: Container[] } } } })
      .find((d) => d.kind === "StatefulSet");
    const worker = set?.spec.template?.spec.containers?.find((c) => c.name === "worker");
    const env = Object.fromEntries((worker?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject(EXPECTED);
  });
});
