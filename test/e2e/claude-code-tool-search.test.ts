/**
 * Claude Code's tool search (ToolSearch, deferred MCP tools) end to end. Claude Code 2.1.332 defers
 * every MCP tool by default (ENABLE_TOOL_SEARCH unset: its mode "tst"): the first request declares
 * only ToolSearch and a `DeferredToolPlaceholder` (`defer_loading: true`) and lists the deferred
 * names in a system message. The scripted test policy makes turn 1 call ToolSearch with
 * `select:mcp__catalog__lookup_invoice`; Claude Code answers with a tool_result holding a
 * `tool_reference` and from then on declares that tool with `defer_loading: true`; the policy makes
 * turn 2 call it (fixed arguments), and the tests' MCP server records the call. The same prompt with
 * ENABLE_TOOL_SEARCH=false (all 24 MCP tools in the header) gives the prompt size without deferral.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SCRIPTED_DEFERRED_ARGUMENT, SCRIPTED_DEFERRED_TOOL } from "../../gpu-worker/generate/scripted-tool-search.ts";
import { REPO_ROOT } from "../../scripts/stack.ts";
import { runClaude, type StreamLine } from "../support/claude-cli.ts";
import {
  type Decision,
  decisionsSince,
  describeDecision,
  logOffset,
  NEW_CONVERSATION_LINE,
} from "../support/cli-client.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";
import { CATALOG_TOOLS, MCP_CATALOG_SERVER } from "../support/mcp-catalog-server.ts";

const dir = mkdtempSync(join(tmpdir(), "frontier-mcp-catalog-"));
const callsFile = join(dir, "calls.jsonl");
const mcpConfigFile = join(dir, "mcp.json");
writeFileSync(
  mcpConfigFile,
  JSON.stringify({
    mcpServers: {
      [MCP_CATALOG_SERVER]: {
        type: "stdio",
        // Claude Code starts it in its own temporary cwd: name tsx by path, not by module resolution.
        command: join(REPO_ROOT, "node_modules/.bin/tsx"),
        args: [join(REPO_ROOT, "test/support/mcp-catalog-server.ts")],
        env: { MCP_CATALOG_CALLS_FILE: callsFile },
      },
    },
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PROMPT = "Look up the invoice record, then say you are done.";

function toolUses(lines: StreamLine[]) {
  return lines
    .filter((l) => l.type === "assistant")
    .flatMap((l) => l.message?.content ?? [])
    .filter((c) => c.type === "tool_use");
}

/** The decisions of the session that answered the main loop (Claude Code's side requests are their own). */
function mainSession(decisions: Decision[]): Decision[] {
  const counts = new Map<string, number>();
  for (const d of decisions) counts.set(d.session, (counts.get(d.session) ?? 0) + 1);
  const [session] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [""];
  return decisions.filter((d) => d.session === session);
}

describe("Claude Code ToolSearch against the local stack", () => {
  let deferredFirstPrompt = 0;

  it("loads a deferred MCP tool through ToolSearch and calls it, the turn after the reference continued live", async () => {
    const logStart = logOffset(inject("workerLogFile"));
    const { code, lines, stderr } = await runClaude(inject("edgeUrl"), PROMPT, {
      tools: ["ToolSearch"],
      allowedTools: ["ToolSearch", SCRIPTED_DEFERRED_TOOL],
      maxTurns: 4,
      mcpConfigFile,
    });
    const result = lines.find((l) => l.type === "result");
    expect(result, `no result line; stderr: ${stderr.slice(-2000)}`).toBeDefined();
    expect(result?.is_error).toBe(false);
    expect(code).toBe(0);
    expect(toolUses(lines).map((c) => [c.name, c.input?.query ?? c.input?.record_id])).toEqual([
      ["ToolSearch", `select:${SCRIPTED_DEFERRED_TOOL}`],
      [SCRIPTED_DEFERRED_TOOL, SCRIPTED_DEFERRED_ARGUMENT],
    ]);
    // ToolSearch's result loaded the tool by reference; the MCP server ran the forced call.
    const results = JSON.stringify(lines.filter((l) => l.type === "user").flatMap((l) => l.message?.content ?? []));
    expect(results).toContain(`"tool_name":"${SCRIPTED_DEFERRED_TOOL}"`);
    const calls = readFileSync(callsFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as unknown);
    expect(calls).toEqual([{ name: "lookup_invoice", arguments: { record_id: SCRIPTED_DEFERRED_ARGUMENT } }]);

    const turns = mainSession(decisionsSince(inject("workerLogFile"), logStart));
    const report = turns.map((d) => d.line).join("\n");
    console.log(`tool search turns:\n${turns.map((d, i) => `  turn ${i + 1}: ${describeDecision(d)}`).join("\n")}`);
    expect(turns.length, report).toBeGreaterThanOrEqual(3);
    const [first, afterReference, afterCall] = turns;
    expect(first?.line, report).toMatch(NEW_CONVERSATION_LINE);
    deferredFirstPrompt = first?.prompt ?? 0;
    // The request after the tool_reference (tools array now declaring the loaded tool, deferred): the
    // header is unchanged, so only the suffix (the call and its result, the tool's definition) is new.
    expect(afterReference?.match, report).toBe("tool-output-ids");
    const suffix = (afterReference?.prompt ?? 0) - (first?.prompt ?? 0);
    const prefilled = (afterReference?.prompt ?? 0) - (afterReference?.cached ?? 0);
    expect(prefilled, report).toBeLessThanOrEqual(suffix + 64);
    reportContinuedTurn("after tool_reference", afterReference?.prompt ?? 0, afterReference?.cached ?? 0);
    // After the deferred call: live, or (a cold start) with the miss's reason named.
    if (afterCall?.match === "cold") expect(afterCall.line, report).toMatch(/ reason=[\w-]+/);
  });

  it("without tool search the same prompt renders all MCP tools: the deferred first prompt is much smaller", async () => {
    expect(deferredFirstPrompt).toBeGreaterThan(0);
    const logStart = logOffset(inject("workerLogFile"));
    const { code, lines, stderr } = await runClaude(inject("edgeUrl"), PROMPT, {
      tools: ["ToolSearch"],
      allowedTools: [],
      maxTurns: 1,
      mcpConfigFile,
      env: { ENABLE_TOOL_SEARCH: "false" },
    });
    expect(lines.find((l) => l.type === "result")?.is_error, stderr.slice(-2000)).toBe(false);
    expect(code).toBe(0);
    const [first] = mainSession(decisionsSince(inject("workerLogFile"), logStart));
    const allToolsPrompt = first?.prompt ?? 0;
    console.log(
      `first prompt: ${allToolsPrompt} tokens with all ${CATALOG_TOOLS.length} MCP tools, ${deferredFirstPrompt} deferred (${allToolsPrompt - deferredFirstPrompt} fewer)`,
    );
    // Each of the 24 definitions (description + schema) is well over 100 tokens once rendered.
    expect(allToolsPrompt - deferredFirstPrompt).toBeGreaterThan(CATALOG_TOOLS.length * 100);
  });
});
