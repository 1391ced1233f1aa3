/**
 * Codex CLI's remote compaction against the stack: its built-in OpenAI provider (over the Responses
 * WebSocket) compacts remotely (v2: a /v1/responses turn whose input ends with `compaction_trigger`)
 * once the context passes `model_auto_compact_token_limit`. Here the limit is below the first
 * request, so Codex compacts mid-turn after its first tool calls; the test watches Codex's rollout
 * file and stops it once the turn after the compaction has run. It checks that Codex installed
 * Frontier's compaction item (sealed for this tenant) as its new history and went on sampling from
 * it. The worker runs the test-only scripted policy (forced, harmless echo commands); with it, every
 * compacted history ends in a user-side item, so the policy calls the commands again and Codex would
 * compact again at this tiny limit: hence the stop.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { openCompaction } from "../../edge/protocols/responses/request/compaction-items.ts";
import { DEV_ID_SECRET } from "../../shared/dev-secrets.ts";
import { LOCAL_API_KEY } from "../support/api.ts";
import { clientBin } from "../support/client-packages.ts";

const home = mkdtempSync(join(tmpdir(), "frontier-codex-compact-home-"));
const work = mkdtempSync(join(tmpdir(), "frontier-codex-compact-work-"));
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

interface RolloutLine {
  type: string;
  payload?: {
    type?: string;
    replacement_history?: { type: string; role?: string; encrypted_content?: string }[];
  };
}

function rollout(): RolloutLine[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : [path];
    });
  let files: string[] = [];
  try {
    files = walk(join(home, "sessions")).filter((f) => f.endsWith(".jsonl"));
  } catch {
    return [];
  }
  return files.flatMap((f) =>
    readFileSync(f, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as RolloutLine),
  );
}

/** A model call after the first compaction: Codex sampled from the compacted history. */
function sampledAfterCompaction(lines: RolloutLine[]): boolean {
  const at = lines.findIndex((l) => l.type === "compacted");
  return at >= 0 && lines.slice(at + 1).some((l) => l.type === "response_item" && l.payload?.type === "function_call");
}

/** `codex exec` until it has sampled after a compaction (then SIGTERM), or `timeoutMs`. */
function runUntilCompacted(prompt: string, timeoutMs: number): Promise<{ stderr: string; stopped: boolean }> {
  const args = [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "-m",
    "frontier-test",
    "-c",
    `openai_base_url="${inject("edgeUrl")}/v1"`,
    "-c",
    "model_auto_compact_token_limit=2000",
    prompt,
  ];
  const child = spawn(clientBin("codex"), args, {
    cwd: work,
    env: { PATH: process.env.PATH ?? "", HOME: home, CODEX_HOME: home, CODEX_API_KEY: LOCAL_API_KEY },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    let stopped = false;
    const poll = setInterval(() => {
      if (sampledAfterCompaction(rollout())) {
        stopped = true;
        child.kill("SIGTERM");
      }
    }, 250);
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("exit", () => {
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ stderr, stopped });
    });
  });
}

describe("Codex CLI's remote compaction (v2) against Frontier", () => {
  it("installs Frontier's sealed compaction item as its history and samples on from it", async () => {
    const logFile = inject("workerLogFile");
    const before = readFileSync(logFile, "utf8").length;
    const run = await runUntilCompacted("Run the two echo commands, then say you are done.", 180_000);
    const lines = rollout();
    const summary = `${run.stderr.slice(-2000)}\n${lines.map((l) => `${l.type}:${l.payload?.type ?? ""}`).join(" ")}`;
    expect(run.stopped, summary).toBe(true);
    expect(run.stderr, summary).not.toContain("remote compaction v2 expected exactly one compaction output item");
    const compacted = lines.find((l) => l.type === "compacted");
    const history = compacted?.payload?.replacement_history ?? [];
    const item = history.findLast((i) => i.type === "compaction");
    expect(item?.encrypted_content, summary).toMatch(/^frv1\./);
    expect(await openCompaction(DEV_ID_SECRET, "local", item?.encrypted_content ?? "")).toBeDefined();
    expect(history.some((i) => i.type === "message" && i.role === "user")).toBe(true);
    // The worker served the tool loop's results live before the compaction.
    const decisions = readFileSync(logFile, "utf8").slice(before);
    expect(decisions).toMatch(/live continuation match=tool-output-ids/);
  });
});
