/**
 * Claude Code's real CLI (from npm) in `-p` mode, offline, pointed at an edge, with Bash allowed;
 * and the worker decision-log check its e2e tests share.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { REPO_ROOT } from "../../scripts/stack.ts";
import { LOCAL_API_KEY } from "./api.ts";

export interface StreamLine {
  type: string;
  subtype?: string;
  is_error?: boolean;
  num_turns?: number;
  message?: { content?: { type: string; name?: string; input?: { command?: string }; content?: unknown }[] };
}

export function runClaude(
  edgeUrl: string,
  prompt: string,
): Promise<{ code: number | null; lines: StreamLine[]; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), "frontier-claude-home-"));
  const work = mkdtempSync(join(tmpdir(), "frontier-claude-work-"));
  const bin = join(REPO_ROOT, "node_modules/.bin/claude");
  const args = [
    "-p",
    prompt,
    "--allowedTools",
    "Bash",
    "--output-format",
    "stream-json",
    "--verbose",
    "--max-turns",
    "4",
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: work,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        ANTHROPIC_BASE_URL: edgeUrl,
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

/**
 * The worker's decision lines `log`: each session's first turn is cold (no live state), every
 * later one a live tool-ID match, and some turn matched `ids` results. (Claude Code may send a
 * parallel side request, which is its own branch and starts cold too: correct placement, not a miss.)
 */
export function expectSuffixOnlyAfterFirst(log: string, ids: number): void {
  const decisions = log.split("\n").filter((l) => / (live continuation|live kv cache miss) /.test(l));
  const report = decisions.join("\n");
  expect(
    decisions.some((l) => l.includes(` match=tool-output-ids ids=${ids} `)),
    report,
  ).toBe(true);
  const seen = new Set<string>();
  for (const line of decisions) {
    const session = / session=(\w+)/.exec(line)?.[1] ?? "";
    if (seen.has(session)) expect(line, report).toMatch(/ match=tool-output-ids /);
    else expect(line, report).toContain("live kv cache miss reason=no-live-state");
    seen.add(session);
  }
}

/**
 * Claude Code runs the scripted loop against `edgeUrl`: two forced Bash calls (fixed echo commands),
 * their results, an answer; every turn after a session's first a live tool-ID match in the log.
 */
export async function expectBashLoop(edgeUrl: string, logFile: string): Promise<void> {
  const logBefore = readFileSync(logFile, "utf8").length;
  const { code, lines, stderr } = await runClaude(edgeUrl, "Run the two echo commands, then say you are done.");
  const result = lines.find((l) => l.type === "result");
  expect(result, `no result line; stderr: ${stderr.slice(-2000)}`).toBeDefined();
  expect(result?.is_error).toBe(false);
  expect(code).toBe(0);
  const toolUses = lines
    .filter((l) => l.type === "assistant")
    .flatMap((l) => l.message?.content ?? [])
    .filter((c) => c.type === "tool_use");
  expect(toolUses.map((c) => [c.name, c.input?.command])).toEqual([
    ["Bash", "echo frontier-one"],
    ["Bash", "echo frontier-two"],
  ]);
  const toolResults = JSON.stringify(lines.filter((l) => l.type === "user").flatMap((l) => l.message?.content ?? []));
  expect(toolResults).toContain("frontier-one");
  expect(toolResults).toContain("frontier-two");
  expect(result?.num_turns).toBeGreaterThanOrEqual(2);

  // The worker's decision log: each session starts cold; every later turn is a live tool-ID match.
  expectSuffixOnlyAfterFirst(readFileSync(logFile, "utf8").slice(logBefore), 2);
}
