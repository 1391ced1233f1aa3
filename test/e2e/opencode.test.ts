/**
 * opencode's real CLI (from npm; its linux binary comes from its npm platform package), offline,
 * configured by its JSON config file to point at the local stack: once through its
 * openai-compatible provider (`@ai-sdk/openai-compatible`: Chat Completions), once through its
 * Anthropic provider (Messages), whose `opencode run -c` follow-up continues the thread. With each
 * session's first message opencode sends a concurrent title request (own system prompt, no tools)
 * carrying the same `x-session-affinity` hint: it must branch, never replace the main session's KV.
 * The worker runs the test-only scripted policy (forced echo calls on opencode's `bash` tool). The
 * prompt is kept small for the one-thread CI model: a one-line agent prompt and only `bash` enabled.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { LOCAL_API_KEY } from "../support/api.ts";
import {
  type Decision,
  decisionsSince,
  describeDecision,
  isLive,
  logOffset,
  runCli,
  turnKind,
} from "../support/cli-client.ts";
import { clientBin, reportContinuedTurn } from "../support/client-packages.ts";

interface OpencodeEvent {
  type: string;
  part?: { type: string; tool?: string; state?: { status?: string; input?: { command?: string }; output?: string } };
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const OFF_TOOLS = ["edit", "write", "glob", "grep", "read", "skill", "task", "todowrite", "webfetch"];

/** A fresh home and project folder whose opencode.json selects `provider`'s `frontier-test` model. */
function project(provider: "anthropic" | "frontier"): { home: string; work: string } {
  const home = mkdtempSync(join(tmpdir(), "frontier-opencode-home-"));
  const work = mkdtempSync(join(tmpdir(), "frontier-opencode-work-"));
  dirs.push(home, work);
  const baseURL = `${inject("edgeUrl")}/v1`;
  const model = { "frontier-test": { name: "Frontier test", tool_call: true } };
  const providers =
    provider === "anthropic"
      ? { anthropic: { options: { baseURL, apiKey: LOCAL_API_KEY }, models: model } }
      : {
          frontier: {
            npm: "@ai-sdk/openai-compatible",
            name: "Frontier",
            options: { baseURL, apiKey: LOCAL_API_KEY },
            models: model,
          },
        };
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: providers,
    model: `${provider}/frontier-test`,
    autoupdate: false,
    share: "disabled",
    lsp: false,
    formatter: false,
    tools: Object.fromEntries(OFF_TOOLS.map((t) => [t, false])),
    agent: { build: { prompt: "You are opencode." } },
  };
  writeFileSync(join(work, "opencode.json"), JSON.stringify(config));
  return { home, work };
}

async function opencode(where: { home: string; work: string }, args: string[]): Promise<OpencodeEvent[]> {
  const started = Date.now();
  const run = await runCli(clientBin("opencode"), ["run", "--format", "json", ...args], {
    cwd: where.work,
    env: { HOME: where.home, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" },
    timeoutMs: 200_000,
  });
  console.log(`opencode run ${args.join(" ")}: exit ${run.code} after ${Math.round((Date.now() - started) / 1000)} s`);
  expect(run.code, run.stderr.slice(-2000)).toBe(0);
  return run.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as OpencodeEvent);
}

function bashCalls(events: OpencodeEvent[]) {
  return events
    .filter((e) => e.part?.type === "tool" && e.part.tool === "bash" && e.part.state?.status === "completed")
    .map((e) => ({ command: e.part?.state?.input?.command, output: e.part?.state?.output?.trim() }));
}

const ECHOES = [
  { command: "echo frontier-one", output: "frontier-one" },
  { command: "echo frontier-two", output: "frontier-two" },
];

/** The main session's decisions (it has the tools, so its first request is the longer prompt) and the rest. */
function splitSessions(decisions: Decision[], main: string) {
  return {
    main: decisions.filter((d) => d.session === main),
    side: decisions.filter((d) => d.session !== main),
  };
}

describe("opencode (opencode run) against the local stack", () => {
  it("runs its bash tool loop through the openai-compatible provider; the title request branches", async () => {
    const log = inject("workerLogFile");
    const start = logOffset(log);
    const events = await opencode(project("frontier"), ["Run the two echo commands, then say you are done."]);
    expect(bashCalls(events)).toEqual(ECHOES);
    const decisions = decisionsSince(log, start);
    const report = decisions.map((d) => d.line).join("\n");
    const toolTurn = decisions.find((d) => d.match === "tool-output-ids");
    const { main, side } = splitSessions(decisions, toolTurn?.session ?? "");
    expect(main.map(turnKind), report).toEqual(["new", "tool-output-ids"]);
    expect(main[1]?.cached ?? 0).toBeGreaterThanOrEqual(main[0]?.prompt ?? Number.POSITIVE_INFINITY);
    expect(side.length, report).toBeGreaterThan(0); // the title request, on its own session
    console.log(`opencode (openai-compatible): turn 2 (tool results) ${describeDecision(main[1])}`);
    reportContinuedTurn("openai-compatible tool results", main[1]?.prompt ?? 0, main[1]?.cached ?? 0);
  }, 420_000);

  it("continues its Anthropic-provider thread live with -c despite the concurrent title request", async () => {
    const log = inject("workerLogFile");
    const where = project("anthropic");
    const start = logOffset(log);
    expect(bashCalls(await opencode(where, ["Run the two echo commands, then say you are done."]))).toEqual(ECHOES);
    const first = decisionsSince(log, start);
    const report = () =>
      decisionsSince(log, start)
        .map((d) => d.line)
        .join("\n");
    const session = first.find((d) => d.match === "tool-output-ids")?.session ?? "";
    const { main, side } = splitSessions(first, session);
    expect(main.map(turnKind), report()).toEqual(["new", "tool-output-ids"]);
    expect(side.length, report()).toBeGreaterThan(0);

    const beforeFollowUp = logOffset(log);
    expect(bashCalls(await opencode(where, ["-c", "Run them once more."]))).toEqual(ECHOES);
    const followUp = decisionsSince(log, beforeFollowUp);
    expect(
      followUp.map((d) => d.session),
      report(),
    ).toEqual([session, session]);
    expect(isLive(followUp[0]), report()).toBe(true);
    expect(followUp[1]?.match, report()).toBe("tool-output-ids");
    console.log(
      `opencode (anthropic): turn 2 ${describeDecision(main[1])}; -c follow-up ${describeDecision(followUp[0])}; its tool results ${describeDecision(followUp[1])}`,
    );
    reportContinuedTurn("anthropic run -c", followUp[0]?.prompt ?? 0, followUp[0]?.cached ?? 0);
  }, 420_000);
});
