/**
 * Codex CLI's real binary (from npm), offline, with a custom-provider config (`model_provider` with
 * `base_url`, `wire_api = "responses"` and the key from an `auth` command, which makes Codex fetch
 * the model catalog from `/v1/models?client_version=…`; a key from `env_key` never does), pointed at
 * the local stack. The worker runs the test-only scripted policy: a user turn is forced (by grammar,
 * through the real context) to call Codex's `exec_command` with two fixed harmless echo commands;
 * after the results it answers. `codex exec` runs one turn, `codex exec resume --last` continues
 * the thread by replaying it (store: false): every request after the first is a live continuation.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import { NEW_CONVERSATION_LINE } from "../support/cli-client.ts";
import { reportContinuedTurn } from "../support/client-packages.ts";
import { type CodexEvent, type CodexRun, runCodexExec } from "../support/codex-cli.ts";

const home = mkdtempSync(join(tmpdir(), "frontier-codex-home-"));
const work = mkdtempSync(join(tmpdir(), "frontier-codex-work-"));
writeFileSync(
  join(home, "config.toml"),
  [
    'model = "frontier-test"',
    'model_provider = "frontier"',
    "",
    "[model_providers.frontier]",
    'name = "Frontier"',
    `base_url = "${inject("edgeUrl")}/v1"`,
    'wire_api = "responses"',
    "",
    "[model_providers.frontier.auth]",
    'command = "printenv"',
    'args = ["FRONTIER_API_KEY"]',
    "",
  ].join("\n"),
);
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

function runCodex(args: string[]): Promise<CodexRun> {
  return runCodexExec(args, work, { HOME: home, CODEX_HOME: home, FRONTIER_API_KEY: LOCAL_API_KEY }, 200_000);
}

function commands(events: CodexEvent[]) {
  return events
    .filter((e) => e.type === "item.completed" && e.item?.type === "command_execution")
    .map((e) => ({ command: e.item?.command ?? "", exitCode: e.item?.exit_code, output: e.item?.aggregated_output }));
}

/** The worker's decision lines logged since `offset`. */
function decisionsSince(offset: number): string[] {
  return readFileSync(inject("workerLogFile"), "utf8")
    .slice(offset)
    .split("\n")
    .filter((l) => / (live continuation|live kv cache miss) /.test(l));
}

describe("Codex CLI (codex exec) against the local stack", () => {
  it("runs its shell tool loop and a resumed thread, every request after the first live", async () => {
    const logFile = inject("workerLogFile");
    const before = readFileSync(logFile, "utf8").length;
    const first = await runCodex(["Run the two echo commands, then say you are done."]);
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    const ran = commands(first.events);
    expect(ran.map((c) => c.command)).toEqual([
      expect.stringContaining("echo frontier-one"),
      expect.stringContaining("echo frontier-two"),
    ]);
    for (const c of ran) expect(c.exitCode).toBe(0);
    expect(ran[0]?.output).toContain("frontier-one");
    expect(first.events.some((e) => e.item?.type === "agent_message")).toBe(true);
    expect(first.events.some((e) => e.type === "turn.failed" || e.type === "error")).toBe(false);
    // The catalog described the model: no fallback-metadata warning (an `error` item) and no failed refresh.
    expect(JSON.stringify(first.events)).not.toMatch(/Model metadata for .* not found/);
    expect(first.stderr).not.toContain("failed to refresh available models");

    const afterFirst = readFileSync(logFile, "utf8").length;
    const resumed = await runCodex(["resume", "--last", "Run them once more."]);
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    expect(commands(resumed.events)).toHaveLength(2);
    const usage = resumed.events.find((e) => e.type === "turn.completed")?.usage;
    expect(usage?.cached_input_tokens ?? 0).toBeGreaterThan(0);

    // First exec: the first request starts anew (cold, or a prefix an earlier Codex run left), the
    // tool results continue by their call IDs.
    const firstRun = decisionsSince(before).slice(0, 2);
    const report = decisionsSince(before).join("\n");
    expect(firstRun[0], report).toMatch(NEW_CONVERSATION_LINE);
    expect(firstRun[1], report).toMatch(/ live continuation match=tool-output-ids ids=2 /);
    const session = / session=(\w+)/.exec(firstRun[0] ?? "")?.[1];
    // The resumed thread replays everything (store: false) and lands on the same session's live KV:
    // its first request continues by prefix, its tool results by call IDs.
    const resumedRun = decisionsSince(afterFirst);
    expect(resumedRun.length, report).toBeGreaterThanOrEqual(2);
    for (const line of resumedRun) {
      expect(line, report).toContain(` session=${session}`);
      expect(line, report).toMatch(/ live continuation match=/);
    }
    expect(resumedRun[1], report).toMatch(/ match=tool-output-ids ids=2 /);
    const cached = (line: string | undefined) => Number(/ cached=(\d+)/.exec(line ?? "")?.[1] ?? 0);
    const prompt = (line: string | undefined) => Number(/ prompt=(\d+)/.exec(line ?? "")?.[1] ?? 0);
    console.log(
      `codex: exec tool turn prompt=${prompt(firstRun[1])} cached=${cached(firstRun[1])}; resume prompt=${prompt(resumedRun[0])} cached=${cached(resumedRun[0])}; resume tool turn prompt=${prompt(resumedRun[1])} cached=${cached(resumedRun[1])}`,
    );
    reportContinuedTurn("exec tool results", prompt(firstRun[1]), cached(firstRun[1]));
    reportContinuedTurn("exec resume --last", prompt(resumedRun[0]), cached(resumedRun[0]));
  });
});
