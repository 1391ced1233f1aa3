/**
 * Claude Code's WebSearch tool end to end: the scripted test policy makes the main turn call
 * WebSearch with a fixed query; Claude Code then sends its own request declaring the hosted
 * `web_search_20250305` tool, which Frontier runs against the local fake SearXNG inside that turn
 * (server_tool_use + web_search_tool_result); Claude Code turns the result into the WebSearch tool
 * result, and the main turn answers.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, inject, it } from "vitest";
import { SCRIPTED_SEARCH_QUERY } from "../../gpu-worker/generate/sampling-policy.ts";
import { REPO_ROOT } from "../../scripts/stack.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { FAKE_PAGE_TITLE } from "../support/fake-web.ts";

interface StreamLine {
  type: string;
  is_error?: boolean;
  message?: { content?: { type: string; name?: string; input?: { query?: string }; content?: unknown }[] };
}

function runClaude(prompt: string): Promise<{ code: number | null; lines: StreamLine[]; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), "frontier-claude-home-"));
  const work = mkdtempSync(join(tmpdir(), "frontier-claude-work-"));
  const args = ["-p", prompt, "--tools", "WebSearch", "--allowedTools", "WebSearch"];
  args.push("--output-format", "stream-json", "--verbose", "--max-turns", "3");
  return new Promise((resolve, reject) => {
    const child = spawn(join(REPO_ROOT, "node_modules/.bin/claude"), args, {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        ANTHROPIC_BASE_URL: inject("edgeUrl"),
        ANTHROPIC_API_KEY: LOCAL_API_KEY,
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 200_000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rmSync(home, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
      const lines = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as StreamLine);
      resolve({ code, lines, stderr });
    });
  });
}

describe("Claude Code WebSearch against the local stack", () => {
  it("searches through Frontier's hosted web_search and answers from its result", async () => {
    const logStart = readFileSync(inject("workerLogFile"), "utf8").length;
    const { code, lines, stderr } = await runClaude("Search the web for frontier, then answer.");
    const result = lines.find((l) => l.type === "result");
    expect(result, `no result line; stderr: ${stderr.slice(-2000)}`).toBeDefined();
    expect(result?.is_error).toBe(false);
    expect(code).toBe(0);
    const calls = lines
      .filter((l) => l.type === "assistant")
      .flatMap((l) => l.message?.content ?? [])
      .filter((c) => c.type === "tool_use");
    expect(calls.map((c) => [c.name, c.input?.query])).toEqual([["WebSearch", SCRIPTED_SEARCH_QUERY]]);
    // WebSearch's tool result carries what Frontier's hosted search found.
    const results = JSON.stringify(lines.filter((l) => l.type === "user").flatMap((l) => l.message?.content ?? []));
    expect(results).toContain(FAKE_PAGE_TITLE);
    expect(results).toContain(`${inject("fakeWebUrl")}/page.html`);
    // The hosted search ran in the worker, inside Claude Code's own WebSearch request.
    const log = readFileSync(inject("workerLogFile"), "utf8").slice(logStart);
    expect(log).toMatch(/server tool tool=web_search/);
  });
});
