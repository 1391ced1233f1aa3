/**
 * Codex CLI with its own default model, as a user who only changes the URL runs it: the built-in
 * OpenAI provider (`-c openai_base_url=…`, CODEX_API_KEY), no `-m`, no model catalog, no config
 * file. Codex 0.171's default model (`gpt-6.2-sol`) uses "Responses Lite": no top-level `tools`, the
 * tool set as a leading `additional_tools` input item, a `configuration_update` for the reasoning
 * effort, and code mode (its shell is `functions.exec`, a freeform JavaScript tool whose script calls
 * `tools.exec_command`). Frontier serves whatever model name a request carries with its configured
 * model (docs/clients/codex.md).
 *
 * The turns go over the Responses WebSocket; the worker runs the test-only scripted policy, which
 * forces two `functions.exec` calls whose scripts run the fixed harmless echo commands. Only the base
 * instructions are shortened (`model_instructions_file`: the default's 26 KB would make the one-thread
 * CI model's cold prefill take minutes; the tools, items and request shape stay the default model's).
 * `codex exec resume --last` then replays the thread (store: false) on a new socket.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";
import { type CodexRun, runCodexExec } from "../support/codex-cli.ts";

const home = mkdtempSync(join(tmpdir(), "frontier-codex-default-home-"));
const work = mkdtempSync(join(tmpdir(), "frontier-codex-default-work-"));
const instructions = join(home, "instructions.md");
writeFileSync(
  instructions,
  "You are Codex, a coding agent. Use your tools to do what the user asks, then answer briefly.\n",
);
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

function runCodex(args: string[]): Promise<CodexRun> {
  const baseUrl = `openai_base_url="${inject("edgeUrl")}/v1"`;
  const env = { HOME: home, CODEX_HOME: home, CODEX_API_KEY: LOCAL_API_KEY };
  const shortened = `model_instructions_file="${instructions}"`;
  return runCodexExec(["-c", baseUrl, "-c", shortened, ...args], work, env, 200_000);
}

/** The JSON lines of Codex's session record (its rollout file) for the run. */
function rollout(): { type: string; payload?: Record<string, unknown> }[] {
  const files = (readdirSync(join(home, "sessions"), { recursive: true }) as string[]).filter((f) =>
    /rollout-.*\.jsonl$/.test(f),
  );
  expect(files.length).toBeGreaterThan(0);
  return readFileSync(join(home, "sessions", files.sort()[0] ?? ""), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { type: string; payload?: Record<string, unknown> });
}

function decisionsSince(offset: number): string[] {
  return readFileSync(inject("workerLogFile"), "utf8")
    .slice(offset)
    .split("\n")
    .filter((l) => / (live continuation|live kv cache miss) /.test(l));
}

const commands = (run: CodexRun) =>
  run.events
    .filter((e) => e.type === "item.completed" && e.item?.type === "command_execution")
    .map((e) => ({ command: e.item?.command ?? "", exitCode: e.item?.exit_code, output: e.item?.aggregated_output }));

describe("Codex CLI with its default model (no -m, no catalog) over the Responses WebSocket", () => {
  it("runs its code-mode tool loop and a resumed thread, the tool results continuing the live KV", async () => {
    const logFile = inject("workerLogFile");
    const before = readFileSync(logFile, "utf8").length;
    const first = await runCodex(["Run the two echo commands, then say you are done."]);
    const output = `${first.stderr.slice(-3000)}\n${JSON.stringify(first.events.slice(-5))}`;
    expect(first.code, output).toBe(0);
    expect(first.stderr, output).not.toContain("failed to connect to Responses WebSocket");
    expect(first.stderr, output).not.toContain("Reconnecting");
    expect(JSON.stringify(first.events), output).not.toContain("Unsupported input item type");
    const ran = commands(first);
    expect(
      ran.map((c) => c.command),
      output,
    ).toEqual([expect.stringContaining("echo frontier-one"), expect.stringContaining("echo frontier-two")]);
    for (const c of ran) expect(c.exitCode).toBe(0);
    expect(ran[1]?.output).toContain("frontier-two");
    expect(first.events.some((e) => e.item?.type === "agent_message")).toBe(true);

    // What Codex sent and got: its own default model, the tool set as an additional_tools item, and
    // the model's calls back as namespaced custom calls of its code-mode exec tool.
    const items = rollout()
      .filter((l) => l.type === "response_item")
      .map((l) => l.payload ?? {});
    const context = rollout().find((l) => l.type === "turn_context")?.payload;
    expect(context?.model).toEqual(expect.any(String));
    expect(context?.model).not.toBe("frontier-test");
    expect(items[0]).toMatchObject({ type: "additional_tools", role: "developer" });
    const calls = items.filter((i) => i.type === "custom_tool_call");
    expect(calls).toHaveLength(2);
    for (const call of calls) expect(call).toMatchObject({ name: "exec", namespace: "functions" });

    const afterFirst = readFileSync(logFile, "utf8").length;
    const resumed = await runCodex(["resume", "--last", "Run them once more."]);
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    expect(commands(resumed)).toHaveLength(2);

    // The first request is cold; the tool results continue by their call IDs, suffix only.
    const firstRun = decisionsSince(before).slice(0, 2);
    const report = decisionsSince(before).join("\n");
    expect(firstRun[0], report).toContain("live kv cache miss reason=no-live-state");
    expect(firstRun[1], report).toMatch(/ live continuation match=tool-output-ids ids=2 /);
    // The resumed thread replays everything on a new socket and continues the same live KV.
    const resumedRun = decisionsSince(afterFirst);
    expect(resumedRun.length, report).toBeGreaterThanOrEqual(2);
    for (const line of resumedRun) expect(line, report).toMatch(/ live continuation match=/);
    expect(resumedRun[1], report).toMatch(/ match=tool-output-ids ids=2 /);
    const cached = (line: string | undefined) => Number(/ cached=(\d+)/.exec(line ?? "")?.[1] ?? 0);
    const prompt = (line: string | undefined) => Number(/ prompt=(\d+)/.exec(line ?? "")?.[1] ?? 0);
    console.log(
      `codex (${String(context?.model)}): exec tool turn prompt=${prompt(firstRun[1])} cached=${cached(firstRun[1])}; resume prompt=${prompt(resumedRun[0])} cached=${cached(resumedRun[0])}; resume tool turn prompt=${prompt(resumedRun[1])} cached=${cached(resumedRun[1])}`,
    );
    reportContinuedTurn("default model: exec tool results", prompt(firstRun[1]), cached(firstRun[1]));
    reportContinuedTurn("default model: resume --last", prompt(resumedRun[0]), cached(resumedRun[0]));
    reportContinuedTurn("default model: resume tool results", prompt(resumedRun[1]), cached(resumedRun[1]));
  });
});
