/** Codex CLI's real binary (from npm) run once with `codex exec --json`, its JSON events parsed. */
import { spawn } from "node:child_process";
import { clientBin } from "./client-packages.ts";

export interface CodexEvent {
  type: string;
  item?: { type: string; command?: string; aggregated_output?: string; exit_code?: number | null; text?: string };
  usage?: { input_tokens: number; cached_input_tokens: number };
}

export interface CodexRun {
  code: number | null;
  events: CodexEvent[];
  stderr: string;
}

/** `codex exec --json --skip-git-repo-check ARGS` in `cwd` with exactly `env` (plus PATH); killed past `timeoutMs`. */
export function runCodexExec(args: string[], cwd: string, env: Record<string, string>, timeoutMs: number) {
  const bin = clientBin("codex");
  return new Promise<CodexRun>((resolve, reject) => {
    const child = spawn(bin, ["exec", "--json", "--skip-git-repo-check", ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      const events = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as CodexEvent);
      resolve({ code, events, stderr });
    });
  });
}
