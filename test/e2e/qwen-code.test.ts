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
 * Why a `-c` follow-up re-prefills a few hundred tokens (client-side): Qwen Code sends each user
 * request with a `<system-reminder>` text part naming the current date before it, but saves only the
 * bare request (`recordUserMessage`), so `-c` replays that user message without the reminder part
 * (and sends a fresh one before the new request instead). The replay differs from the live KV's
 * text there, and everything after it is prefilled again; a transparent proxy in front of the edge
 * keeps the requests so the test can show it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SCRIPTED_NO_TOOLS_MARKER } from "../../gpu-worker/generate/sampling-policy.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { decisionsSince, describeDecision, isLive, logOffset, runCli, turnKind } from "../support/cli-client.ts";
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

interface ChatRequest {
  messages: { role: string; content?: string | { type: string; text?: string }[] | null }[];
}

/** A pass-through HTTP proxy in front of `target` that keeps each Chat Completions body Qwen sent. */
async function recordingProxy(target: string) {
  const requests: ChatRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (req.method === "POST" && req.url?.endsWith("/chat/completions"))
      requests.push(JSON.parse(body.toString("utf8")) as ChatRequest);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === "string" && !["host", "connection", "content-length"].includes(name))
        headers.set(name, value);
    try {
      const upstream = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(body.length > 0 && { body }),
      });
      const out: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!["content-encoding", "content-length", "transfer-encoding", "connection"].includes(name))
          out[name] = value;
      });
      res.writeHead(upstream.status, out);
      if (upstream.body) for await (const chunk of upstream.body) res.write(chunk);
      res.end();
    } catch (error) {
      res.destroy(error as Error);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => server.close() };
}

const proxy = await recordingProxy(inject("edgeUrl"));
afterAll(() => proxy.close());

/** A user message's text parts (Qwen sends its own as an array of text parts). */
const textParts = (message: ChatRequest["messages"][number] | undefined): string[] =>
  typeof message?.content === "string" ? [message.content] : (message?.content ?? []).map((part) => part.text ?? "");
const isDateReminder = (text: string) => /^<system-reminder>\s*The current date is/.test(text);
/** The main conversation's requests (not its memory-extraction side requests, which have their own system prompt). */
const mainRequests = () => proxy.requests.filter((r) => textParts(r.messages[0])[0]?.startsWith("You are Qwen Code."));

async function qwen(args: string[]): Promise<QwenEvent[]> {
  const started = Date.now();
  const base = ["--auth-type", "openai", "--yolo", "-o", "stream-json", "--system-prompt", "You are Qwen Code."];
  const run = await runCli(clientBin("qwen"), [...base, ...args], {
    cwd: work,
    env: {
      HOME: home,
      OPENAI_BASE_URL: `${proxy.url}/v1`,
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
    expect(turn1.map(turnKind), report()).toEqual(["new", "tool-output-ids"]);
    const main = turn1[0]?.session ?? "";
    expect(turn1[1]?.session).toBe(main);
    expect(turn1[1]?.cached ?? 0).toBeGreaterThanOrEqual(turn1[0]?.prompt ?? Number.POSITIVE_INFINITY);

    // What the first run sent: its user message carries the date reminder as a text part of its own.
    const [firstRequest] = mainRequests();
    const firstUser = textParts(firstRequest?.messages[1]);
    const reminder = firstUser.find(isDateReminder) ?? "";
    expect(reminder, JSON.stringify(firstUser)).not.toBe("");

    // A follow-up answered without tools: Qwen then runs its memory extractor (its own system + tools).
    const beforeText = logOffset(log);
    const sentBefore = mainRequests().length;
    await qwen(["-c", "-p", `Now just say you are done. ${SCRIPTED_NO_TOOLS_MARKER}`]);
    const [textTurn, ...memory] = decisionsSince(log, beforeText);
    expect(textTurn?.session, report()).toBe(main);
    expect(isLive(textTurn), report()).toBe(true);
    // The cause of its re-prefill (client-side): `-c` replays the first user message as Qwen saved it,
    // without the reminder part it sent (a fresh reminder goes before the new request instead) …
    const followUp = mainRequests()[sentBefore];
    const replayed = textParts(followUp?.messages[1]);
    expect(replayed).toEqual(firstUser.filter((part) => part !== reminder));
    expect(isDateReminder(textParts(followUp?.messages.at(-1))[0] ?? "")).toBe(true);
    // … so the rendered text leaves the live KV inside that message: the text prefix misses
    // (text-mismatch) and the token prefix keeps what comes before the dropped part, all of it
    // within the first request's prompt (the first user message ended it), and the rest is prefilled.
    expect(textTurn?.match, report()).toBe("live-token-prefix");
    expect(textTurn?.line, report()).toContain(" miss=text-mismatch ");
    const firstPrompt = turn1[0]?.prompt ?? 0;
    expect(textTurn?.cached ?? 0, report()).toBeLessThan(firstPrompt);
    // A byte-level vocabulary: the dropped part and what followed it in the first request are at
    // most their bytes in tokens (plus the template's end of turn and assistant prefix).
    const droppedAndAfter = new TextEncoder().encode(
      reminder + firstUser.slice(firstUser.indexOf(reminder) + 1).join(""),
    ).length;
    expect(firstPrompt - (textTurn?.cached ?? 0), report()).toBeLessThanOrEqual(droppedAndAfter + 64);
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
