/**
 * Claude Code's WebSearch tool end to end: the scripted test policy makes the main turn call
 * WebSearch with a fixed query; Claude Code then sends its own request declaring the hosted
 * `web_search_20250305` tool, which Frontier runs against the local fake SearXNG inside that turn
 * (server_tool_use + web_search_tool_result); Claude Code turns the result into the WebSearch tool
 * result, and the main turn answers.
 */
import { readFileSync } from "node:fs";
import { describe, expect, inject, it } from "vitest";
import { SCRIPTED_SEARCH_QUERY } from "../../gpu-worker/generate/sampling-policy.ts";
import { runClaude } from "../support/claude-cli.ts";
import { FAKE_PAGE_TITLE } from "../support/fake-web.ts";

describe("Claude Code WebSearch against the local stack", () => {
  it("searches through Frontier's hosted web_search and answers from its result", async () => {
    const logStart = readFileSync(inject("workerLogFile"), "utf8").length;
    const { code, lines, stderr } = await runClaude(inject("edgeUrl"), "Search the web for frontier, then answer.", {
      tools: ["WebSearch"],
      allowedTools: ["WebSearch"],
      maxTurns: 3,
    });
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
