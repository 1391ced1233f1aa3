/**
 * Claude Code's real CLI (from npm) in `-p` mode, offline, pointed at an edge, with Bash allowed;
 * and the worker decision-log check its e2e tests share.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { LOCAL_API_KEY } from "./api.ts";
import { NEW_CONVERSATION_LINE, runCli } from "./cli-client.ts";
import { clientBin, reportContinuedTurn } from "./client-packages.ts";

export interface StreamLine {
  type: string;
  subtype?: string;
  is_error?: boolean;
  num_turns?: number;
  message?: {
    content?: {
      type: string;
      name?: string;
      input?: { command?: string; query?: string; record_id?: string };
      content?: unknown;
    }[];
  };
}

/**
 * Which tools Claude Code has (`tools`, default all) and may run unasked, and its turn limit; an MCP
 * config file to load (alone: `--strict-mcp-config`) and extra environment (e.g. ENABLE_TOOL_SEARCH).
 */
export interface ClaudeRunOptions {
  tools?: readonly string[];
  allowedTools: readonly string[];
  maxTurns: number;
  mcpConfigFile?: string;
  env?: Record<string, string>;
}

const BASH_LOOP: ClaudeRunOptions = { allowedTools: ["Bash"], maxTurns: 4 };

export async function runClaude(
  edgeUrl: string,
  prompt: string,
  options: ClaudeRunOptions = BASH_LOOP,
): Promise<{ code: number | null; lines: StreamLine[]; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), "frontier-claude-home-"));
  const work = mkdtempSync(join(tmpdir(), "frontier-claude-work-"));
  const args = ["-p", prompt];
  if (options.tools) args.push("--tools", options.tools.join(","));
  args.push("--allowedTools", options.allowedTools.join(","));
  if (options.mcpConfigFile) args.push("--mcp-config", options.mcpConfigFile, "--strict-mcp-config");
  args.push("--output-format", "stream-json", "--verbose", "--max-turns", String(options.maxTurns));
  try {
    const run = await runCli(clientBin("claude"), args, {
      cwd: work,
      env: {
        HOME: home,
        ANTHROPIC_BASE_URL: edgeUrl,
        ANTHROPIC_API_KEY: LOCAL_API_KEY,
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        ...options.env,
      },
      timeoutMs: 200_000,
    });
    const lines = run.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as StreamLine);
    return { code: run.code, lines, stderr: run.stderr };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The worker's decision lines `log`: each session's first turn starts anew (no live state: cold, or
 * a prefix another conversation or a checkpoint holds), every later one a live tool-ID match, and some turn matched `ids` results. (Claude Code may send a
 * parallel side request, which is its own branch and starts cold too: correct placement, not a miss.)
 */
export function expectSuffixOnlyAfterFirst(log: string, ids: number): void {
  const decisions = log.split("\n").filter((l) => / (live continuation|live kv cache miss) /.test(l));
  const report = decisions.join("\n");
  const matched = decisions.find((l) => l.includes(` match=tool-output-ids ids=${ids} `));
  expect(matched, report).toBeDefined();
  const count = (name: string) => Number(new RegExp(` ${name}=(\\d+)`).exec(matched ?? "")?.[1] ?? 0);
  reportContinuedTurn("tool results", count("prompt"), count("cached"));
  const seen = new Set<string>();
  for (const line of decisions) {
    const session = / session=(\w+)/.exec(line)?.[1] ?? "";
    if (seen.has(session)) expect(line, report).toMatch(/ match=tool-output-ids /);
    else expect(line, report).toMatch(NEW_CONVERSATION_LINE);
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
