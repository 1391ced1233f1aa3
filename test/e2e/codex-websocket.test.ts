/**
 * Codex CLI's built-in OpenAI provider with no config file and no custom provider: only its
 * `openai_base_url` setting (here `-c openai_base_url=…`) and CODEX_API_KEY. That provider speaks
 * Responses over WebSocket first (GET /v1/responses upgrade); against a server without the
 * WebSocket mode it logs "failed to connect to Responses WebSocket" and retries before falling back
 * to HTTP. With an API key it never fetches the model catalog, so the catalog the edge serves Codex
 * (`/v1/models?client_version=…`) is saved and given as `model_catalog_json`. Here its tool loop runs over the socket, the follow-ups sending only new items with
 * previous_response_id (store: false), and the tool results continue the live KV by their call IDs. The worker runs the test-only scripted policy (forced,
 * harmless echo commands).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";
import { type CodexRun, runCodexExec } from "../support/codex-cli.ts";

const home = mkdtempSync(join(tmpdir(), "frontier-codex-ws-home-"));
const work = mkdtempSync(join(tmpdir(), "frontier-codex-ws-work-"));
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** The edge's Codex catalog, saved where `model_catalog_json` reads it. */
async function saveCatalog(): Promise<string> {
  const response = await fetch(`${inject("edgeUrl")}/v1/models?client_version=0.171.0`, {
    headers: { authorization: `Bearer ${LOCAL_API_KEY}` },
  });
  expect(response.status).toBe(200);
  const path = join(home, "frontier-models.json");
  writeFileSync(path, await response.text());
  return path;
}

function runCodex(prompt: string, catalogPath: string): Promise<CodexRun> {
  const baseUrl = `openai_base_url="${inject("edgeUrl")}/v1"`;
  const catalog = `model_catalog_json="${catalogPath}"`;
  const env = { HOME: home, CODEX_HOME: home, CODEX_API_KEY: LOCAL_API_KEY };
  return runCodexExec(["-m", "frontier-test", "-c", baseUrl, "-c", catalog, prompt], work, env, 150_000);
}

describe("Codex CLI's built-in provider (no config) over the Responses WebSocket", () => {
  it("runs its tool loop over the socket, the tool results continuing the live KV", async () => {
    const logFile = inject("workerLogFile");
    const before = readFileSync(logFile, "utf8").length;
    const run = await runCodex("Run the two echo commands, then say you are done.", await saveCatalog());
    const output = `${run.stderr.slice(-3000)}\n${JSON.stringify(run.events.slice(-5))}`;
    expect(run.code, output).toBe(0);
    expect(run.stderr, output).not.toContain("Reconnecting");
    expect(run.stderr, output).not.toContain("failed to connect to Responses WebSocket");
    expect(JSON.stringify(run.events), output).not.toMatch(/Model metadata for .* not found/);
    const ran = run.events.filter((e) => e.type === "item.completed" && e.item?.type === "command_execution");
    expect(
      ran.map((e) => e.item?.command),
      output,
    ).toEqual([expect.stringContaining("echo frontier-one"), expect.stringContaining("echo frontier-two")]);
    expect(
      run.events.some((e) => e.item?.type === "agent_message"),
      output,
    ).toBe(true);
    const decisions = readFileSync(logFile, "utf8")
      .slice(before)
      .split("\n")
      .filter((l) => / (live continuation|live kv cache miss) /.test(l));
    const toolTurn = decisions.find((l) => / live continuation match=tool-output-ids ids=2 /.test(l));
    expect(toolTurn, decisions.join("\n")).toBeDefined();
    const count = (name: string) => Number(new RegExp(` ${name}=(\\d+)`).exec(toolTurn ?? "")?.[1] ?? 0);
    reportContinuedTurn("tool results over the socket", count("prompt"), count("cached"));
  });
});
