/**
 * Qwen Code's real CLI (from npm), offline, in its default mode (`--auth-type openai`: Chat
 * Completions at OPENAI_BASE_URL), headless (`-p`, `-o stream-json`, `--yolo`). The worker runs the
 * test-only scripted policy: a user turn is forced to call `run_shell_command` with two fixed echo
 * commands, then answered in plain text. Qwen sends no session hint in this mode, so its `-c`
 * follow-ups (full replays) find the session by their history. After a user turn answered without
 * tools it runs its memory-extraction subagent (its own system prompt and tools, the main history
 * replayed): that side request must not take over the main session, whose next turn stays live.
 * (The follow-ups find the main session by the `call_…` IDs their replayed history carries; a
 * hint-less replay of a text-only history has none and restores a checkpoint instead.)
 * The prompt is kept small for the one-thread CI model (a short `--system-prompt`, skills off,
 * only the shell tool eager); with Qwen's full default prompt (~49k tokens) it continues the same way.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SCRIPTED_NO_TOOLS_MARKER } from "../../gpu-worker/generate/sampling-policy.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { decisionsSince, describeDecision, isLive, logOffset, runCli } from "../support/cli-client.ts";
import { clientBin, reportContinuedTurn } from "../support/client-packages.ts";

interface QwenEvent {
  type: string;
  subtype?: string;
  message?: {
    content?: { type: string; name?: string; input?: { command?: string }; content?: string; is_error?: boolean }[];
  };
  usage?: { input_tokens: number; cache_read_input_tokens?: number };
}

const home = mkdtempSync(join(tmpdir(), "frontier-qwen-home-"));
const work = mkdtempSync(join(tmpdir(), "frontier-qwen-work-"));
mkdirSync(join(home, ".qwen"));
writeFileSync(
  join(home, ".qwen/settings.json"),
  JSON.stringify({
    skills: { disabledLevels: ["bundled", "user", "project", "extension"] },
    tools: { eager: ["run_shell_command"] },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  }),
);
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

async function qwen(args: string[]): Promise<QwenEvent[]> {
  const started = Date.now();
  const base = ["--auth-type", "openai", "--yolo", "-o", "stream-json", "--system-prompt", "You are Qwen Code."];
  const run = await runCli(clientBin("qwen"), [...base, ...args], {
    cwd: work,
    env: {
      HOME: home,
      OPENAI_BASE_URL: `${inject("edgeUrl")}/v1`,
      OPENAI_API_KEY: LOCAL_API_KEY,
      OPENAI_MODEL: "frontier-test",
      QWEN_CODE_SUPPRESS_YOLO_WARNING: "1",
    },
    timeoutMs: 200_000,
  });
  console.log(`qwen ${args.join(" ")}: exit ${run.code} after ${Math.round((Date.now() - started) / 1000)} s`);
  expect(run.code, run.stderr.slice(-2000)).toBe(0);
  const events = run.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as QwenEvent);
  expect(events.find((e) => e.type === "result")?.subtype, run.stdout.slice(-2000)).toBe("success");
  return events;
}

const blocks = (events: QwenEvent[], type: string) =>
  events.flatMap((e) => e.message?.content ?? []).filter((b) => b.type === type);

describe("Qwen Code (qwen -p, --auth-type openai) against the local stack", () => {
  it("runs its shell tool loop; -c follow-ups continue live, also after its memory-extraction request", async () => {
    const log = inject("workerLogFile");
    const start = logOffset(log);
    const first = await qwen(["-p", "Run the two echo commands, then say you are done."]);
    const calls = blocks(first, "tool_use");
    expect(calls.map((c) => [c.name, c.input?.command])).toEqual([
      ["run_shell_command", "echo frontier-one"],
      ["run_shell_command", "echo frontier-two"],
    ]);
    // Qwen reports a result as the output, or (when its shell capture comes back empty, as under
    // heavy load) as a summary naming the command and its exit code.
    const results = blocks(first, "tool_result");
    expect(results.map((r) => r.is_error)).toEqual([false, false]);
    expect(results[0]?.content).toContain("frontier-one");
    expect(results[1]?.content).toContain("frontier-two");
    // Qwen's own usage accounting read cached_tokens: the tool-results request reused turn 1's KV.
    expect(first.find((e) => e.type === "result")?.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
    const turn1 = decisionsSince(log, start);
    const report = () =>
      decisionsSince(log, start)
        .map((d) => d.line)
        .join("\n");
    expect(
      turn1.map((d) => d.match),
      report(),
    ).toEqual(["cold", "tool-output-ids"]);
    const main = turn1[0]?.session ?? "";
    expect(turn1[1]?.session).toBe(main);
    expect(turn1[1]?.cached ?? 0).toBeGreaterThanOrEqual(turn1[0]?.prompt ?? Number.POSITIVE_INFINITY);

    // A follow-up answered without tools: Qwen then runs its memory extractor (its own system + tools).
    const beforeText = logOffset(log);
    await qwen(["-c", "-p", `Now just say you are done. ${SCRIPTED_NO_TOOLS_MARKER}`]);
    const [textTurn, ...memory] = decisionsSince(log, beforeText);
    expect(textTurn?.session, report()).toBe(main);
    expect(isLive(textTurn), report()).toBe(true);
    expect(memory.length, report()).toBeGreaterThan(0);
    for (const side of memory) expect(side.session, report()).not.toBe(main);

    // The next main turn still continues the main session's live KV: the side request branched.
    const beforeThird = logOffset(log);
    const third = await qwen(["-c", "-p", "Run them once more."]);
    expect(blocks(third, "tool_use")).toHaveLength(2);
    const turn3 = decisionsSince(log, beforeThird);
    expect(
      turn3.map((d) => d.session),
      report(),
    ).toEqual([main, main]);
    expect(isLive(turn3[0]), report()).toBe(true);
    expect(turn3[1]?.match, report()).toBe("tool-output-ids");
    console.log(
      [
        `qwen: turn 2 (tool results) ${describeDecision(turn1[1])}`,
        `-c text follow-up ${describeDecision(textTurn)}; memory side requests: ${memory.map(describeDecision).join(", ")}`,
        `-c after memory ${describeDecision(turn3[0])}; its tool results ${describeDecision(turn3[1])}`,
      ].join("\n"),
    );
    reportContinuedTurn("tool results", turn1[1]?.prompt ?? 0, turn1[1]?.cached ?? 0);
    reportContinuedTurn("-c follow-up", turn3[0]?.prompt ?? 0, turn3[0]?.cached ?? 0);
  }, 480_000);
});
