/** Running a real client's CLI (from npm) against the local stack, and reading the worker's decisions. */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `bin args` in `cwd` with exactly `env` (plus PATH), killed after `timeoutMs`. */
export function runCli(
  bin: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? "", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** One line of the worker's continuation log: how a request's prompt met the session's KV. */
export interface Decision {
  /** `tool-output-ids`, `live-text-prefix`, `live-token-prefix`, `checkpoint`, or `cold`. */
  match: string;
  session: string;
  prompt: number;
  cached: number;
  line: string;
}

const LIVE_MATCHES = new Set(["tool-output-ids", "live-text-prefix", "live-token-prefix"]);

/**
 * A conversation's first request in the worker's log: nothing live to continue, so a cold prefill,
 * or a prefix a checkpoint, another conversation of the tenant (shared-prefix) or a registered
 * public prefix holds.
 */
export const NEW_CONVERSATION_LINE =
  / (live kv cache miss reason=no-live-state|live continuation match=(checkpoint|shared-prefix|public-prefix) miss=no-live-state) /;

/** "new" for a conversation's first request (NEW_CONVERSATION_LINE), else its match. */
export function turnKind(d: Decision): string {
  return NEW_CONVERSATION_LINE.test(d.line) ? "new" : d.match;
}

/** True when the request continued the session's live KV (not restored, not cold). */
export function isLive(d: Decision | undefined): boolean {
  return d !== undefined && LIVE_MATCHES.has(d.match);
}

/** The worker log's length now: pass it to `decisionsSince` later. */
export function logOffset(logFile: string): number {
  return readFileSync(logFile, "utf8").length;
}

/** The worker's decisions logged since `offset`, in order. */
export function decisionsSince(logFile: string, offset: number): Decision[] {
  return readFileSync(logFile, "utf8")
    .slice(offset)
    .split("\n")
    .filter((l) => / (live continuation|live kv cache miss) /.test(l))
    .map((line) => {
      const field = (name: string) => new RegExp(` ${name}=(\\S+)`).exec(line)?.[1] ?? "";
      return {
        match: line.includes(" live kv cache miss ") ? "cold" : field("match"),
        session: field("session"),
        prompt: Number(field("prompt")),
        cached: Number(field("cached")),
        line,
      };
    });
}

/** `prompt=… reused=… prefilled=…` of a decision, for the test's log line. */
export function describeDecision(d: Decision | undefined): string {
  return d ? `${d.match} prompt=${d.prompt} reused=${d.cached} prefilled=${d.prompt - d.cached}` : "none";
}
