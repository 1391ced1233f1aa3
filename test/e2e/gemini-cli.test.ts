/**
 * Gemini CLI's real CLI (from npm), offline, on the Gemini API (`GOOGLE_GEMINI_BASE_URL` and
 * `GEMINI_API_KEY`), headless (`-p`, `-o stream-json`, `--yolo`), with its default system prompt.
 * Its settings file keeps it home: the API-key auth type (0.61 refuses the "gateway" type it picks
 * from the base URL alone), no usage statistics or telemetry, no update checks, no IDE, folder trust
 * off, and only its shell tool (`tools.core`). The worker runs the test-only scripted policy: a user
 * turn is forced to call `run_shell_command` with two fixed echo commands, then answered in plain
 * text. The tool results continue the live KV by the `call_…` IDs Frontier minted; `--resume latest`
 * replays the conversation and lands on the same session by those IDs.
 * Why the resumed request re-prefills a few hundred tokens (client-side): Gemini CLI 0.61 replays a
 * resumed conversation with each functionResponse twice, so the rendered history leaves the live
 * KV's text inside that tool-result turn; the token prefix keeps everything before it. A transparent
 * proxy in front of the edge keeps the requests so the test can show it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { SCRIPTED_BASH_COMMANDS } from "../../gpu-worker/generate/sampling-policy.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { decisionsSince, describeDecision, isLive, logOffset, runCli } from "../support/cli-client.ts";
import { clientBin, reportContinuedTurn } from "../support/client-packages.ts";

interface GeminiEvent {
  type: string;
  tool_name?: string;
  tool_id?: string;
  parameters?: { command?: string };
  status?: string;
  output?: string;
  role?: string;
  stats?: { input_tokens: number; cached: number };
}

interface GeminiRequestBody {
  contents: {
    role: string;
    parts: { text?: string; functionCall?: { id?: string }; functionResponse?: { id?: string } }[];
  }[];
}

const home = mkdtempSync(join(tmpdir(), "frontier-gemini-home-"));
const work = mkdtempSync(join(tmpdir(), "frontier-gemini-work-"));
mkdirSync(join(home, ".gemini"));
writeFileSync(
  join(home, ".gemini/settings.json"),
  JSON.stringify({
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    ide: { enabled: false },
    tools: { core: ["run_shell_command"] },
  }),
);
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** A pass-through proxy in front of `target` that keeps each generateContent body and its headers. */
async function recordingProxy(target: string) {
  const requests: { url: string; headers: Record<string, string>; body: GeminiRequestBody }[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const headers = new Headers();
    const seen: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value !== "string") continue;
      seen[name] = value;
      if (!["host", "connection", "content-length"].includes(name)) headers.set(name, value);
    }
    if (req.method === "POST" && /:(stream)?generateContent/i.test(req.url ?? ""))
      requests.push({
        url: req.url ?? "",
        headers: seen,
        body: JSON.parse(body.toString("utf8")) as GeminiRequestBody,
      });
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

async function gemini(args: string[]): Promise<GeminiEvent[]> {
  const started = Date.now();
  const run = await runCli(clientBin("gemini"), ["-m", "frontier-test", "--yolo", "-o", "stream-json", ...args], {
    cwd: work,
    env: { HOME: home, GOOGLE_GEMINI_BASE_URL: proxy.url, GEMINI_API_KEY: LOCAL_API_KEY },
    timeoutMs: 300_000,
  });
  console.log(`gemini ${args.join(" ")}: exit ${run.code} after ${Math.round((Date.now() - started) / 1000)} s`);
  expect(run.code, run.stderr.slice(-2000)).toBe(0);
  const events = run.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as GeminiEvent);
  expect(events.find((e) => e.type === "result")?.status, run.stdout.slice(-2000)).toBe("success");
  return events;
}

const functionResponses = (body: GeminiRequestBody | undefined) =>
  (body?.contents ?? []).flatMap((c) => c.parts).filter((p) => p.functionResponse !== undefined);
const functionCalls = (body: GeminiRequestBody | undefined) =>
  (body?.contents ?? []).flatMap((c) => c.parts).filter((p) => p.functionCall !== undefined);

describe("Gemini CLI (gemini -p) against the local stack", () => {
  it("runs its shell tool loop, continued live by call IDs; --resume latest lands on the same session", async () => {
    const log = inject("workerLogFile");
    const start = logOffset(log);
    const first = await gemini(["-p", "Run the two echo commands, then say you are done."]);
    const calls = first.filter((e) => e.type === "tool_use");
    expect(calls.map((c) => [c.tool_name, c.parameters?.command])).toEqual(
      SCRIPTED_BASH_COMMANDS.map((command) => ["run_shell_command", command]),
    );
    const results = first.filter((e) => e.type === "tool_result");
    expect(results.map((r) => r.status)).toEqual(["success", "success"]);
    expect(results.map((r) => r.output)).toEqual(["frontier-one", "frontier-two"]);
    expect(first.some((e) => e.type === "message" && e.role === "assistant")).toBe(true);
    // Gemini CLI's own stats read usageMetadata.cachedContentTokenCount.
    expect(first.find((e) => e.type === "result")?.stats?.cached ?? 0).toBeGreaterThan(0);

    const report = () =>
      decisionsSince(log, start)
        .map((d) => d.line)
        .join("\n");
    const turn1 = decisionsSince(log, start);
    expect(turn1, report()).toHaveLength(2);
    expect(isLive(turn1[0]), report()).toBe(false);
    expect(turn1[1]?.match, report()).toBe("tool-output-ids");
    const main = turn1[0]?.session ?? "";
    expect(turn1[1]?.session).toBe(main);
    expect(turn1[1]?.cached ?? 0).toBeGreaterThan(turn1[0]?.prompt ?? Number.POSITIVE_INFINITY);
    // What it sent: the key in x-goog-api-key, SSE streaming, and the IDs Frontier minted echoed back.
    const [firstRequest, toolResults] = proxy.requests;
    expect(firstRequest?.url).toBe("/v1beta/models/frontier-test:streamGenerateContent?alt=sse");
    expect(firstRequest?.headers["x-goog-api-key"]).toBe(LOCAL_API_KEY);
    expect(firstRequest?.headers["x-goog-api-client"]).toMatch(/^google-genai-sdk\//);
    const ids = functionResponses(toolResults?.body).map((p) => p.functionResponse?.id);
    expect(
      ids.every((id) => /^(run_shell_command__)?call_/.test(id ?? "")),
      JSON.stringify(ids),
    ).toBe(true);

    const beforeResume = logOffset(log);
    const sentBefore = proxy.requests.length;
    const resumed = await gemini(["--resume", "latest", "-p", "Run them once more."]);
    expect(resumed.filter((e) => e.type === "tool_use")).toHaveLength(2);
    const [resumeTurn, resumeTools] = decisionsSince(log, beforeResume);
    expect(resumeTurn?.session, report()).toBe(main);
    expect(isLive(resumeTurn), report()).toBe(true);
    expect(resumeTools?.match, report()).toBe("tool-output-ids");
    expect(resumeTools?.session).toBe(main);
    // The resumed replay, as Gemini CLI 0.61 sends it, answers each call twice: the rendered history
    // leaves the live text inside that turn, and the token prefix keeps what comes before it.
    const replay = proxy.requests[sentBefore]?.body;
    const duplicated = functionResponses(replay).length > functionCalls(replay).length;
    if (duplicated) {
      expect(resumeTurn?.match, report()).toBe("live-token-prefix");
      expect(resumeTurn?.line, report()).toContain(" miss=text-mismatch ");
    } else {
      expect(resumeTurn?.match, report()).toBe("live-text-prefix");
    }
    console.log(
      `gemini: tool results ${describeDecision(turn1[1])}; --resume latest ${describeDecision(resumeTurn)} (responses replayed twice: ${duplicated}); its tool results ${describeDecision(resumeTools)}`,
    );
    const continued = (name: string, d: (typeof turn1)[number] | undefined) =>
      reportContinuedTurn(name, d?.prompt ?? 0, d?.cached ?? 0);
    continued("tool results", turn1[1]);
    continued("--resume latest", resumeTurn);
    continued("--resume tool results", resumeTools);
  }, 700_000);
});
