/**
 * Claude Code's real CLI (from npm), offline, pointed at the local stack in `-p` mode. The worker
 * runs the test-only scripted policy: the first turn is forced (by grammar, through the real
 * context) to call Bash twice with fixed harmless echo commands; after the results it answers.
 */
import { describe, inject, it } from "vitest";
import { expectBashLoop } from "../support/claude-cli.ts";

describe("Claude Code CLI (-p) against the local stack", () => {
  it("completes a two-tool-call Bash loop, every turn after the first a live continuation", async () => {
    await expectBashLoop(inject("edgeUrl"), inject("workerLogFile"));
  });
});
