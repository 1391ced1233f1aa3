/**
 * The `clients:latest` table: what vitest's JSON reporter says about each e2e file, plus the
 * continued turns the client tests reported (FRONTIER_CLIENTS_REPORT lines), per matrix client.
 */
import type { MatrixClient } from "./matrix.ts";

/** One continued turn a client test measured (one JSON line of FRONTIER_CLIENTS_REPORT). */
export interface ContinuedTurnReport {
  /** The test file's name, e.g. `claude-code.test.ts`. */
  file: string;
  /** Which turn, e.g. `tool results`. */
  turn: string;
  prompt: number;
  prefilled: number;
}

/** What one e2e file did: its tests passed and failed, or why it did not run. */
export interface FileOutcome {
  passed: number;
  failed: number;
  /** Set when the file itself failed (import or setup error) rather than a test in it. */
  error?: string;
}

export interface ClientRow {
  client: string;
  version: string;
  result: "pass" | "fail" | "not run";
  tests: string;
  continued: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

/** The report file's lines (malformed ones are skipped, blank lines ignored). */
export function parseContinuedTurns(text: string): ContinuedTurnReport[] {
  const turns: ContinuedTurnReport[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isRecord(value)) continue;
    const { file, turn, prompt, prefilled } = value;
    if (typeof file !== "string" || typeof turn !== "string") continue;
    if (typeof prompt !== "number" || typeof prefilled !== "number") continue;
    turns.push({ file, turn, prompt, prefilled });
  }
  return turns;
}

/** vitest's `--reporter=json` output, by test file name (`claude-code.test.ts`). */
export function parseVitestJson(text: string): Map<string, FileOutcome> {
  const parsed: unknown = JSON.parse(text);
  const outcomes = new Map<string, FileOutcome>();
  const files = isRecord(parsed) && Array.isArray(parsed.testResults) ? parsed.testResults : [];
  for (const file of files) {
    if (!isRecord(file) || typeof file.name !== "string") continue;
    const name = file.name.split("/").at(-1) ?? file.name;
    const tests = Array.isArray(file.assertionResults) ? file.assertionResults : [];
    const statuses = tests.map((t) => (isRecord(t) ? t.status : undefined));
    const outcome: FileOutcome = {
      passed: statuses.filter((s) => s === "passed").length,
      failed: statuses.filter((s) => s === "failed").length,
    };
    if (file.status === "failed" && outcome.failed === 0) {
      const message = typeof file.message === "string" && file.message !== "" ? file.message : "failed";
      outcome.error = message.split("\n")[0] ?? message;
    }
    outcomes.set(name, outcome);
  }
  return outcomes;
}

/** `prefilled/prompt` with thousands separators, e.g. `237/24,694`. */
export function formatTurn(turn: ContinuedTurnReport): string {
  return `${turn.turn} ${turn.prefilled.toLocaleString("en-US")}/${turn.prompt.toLocaleString("en-US")}`;
}

/** One row per matrix client: its installed version, pass/fail over its files, its continued turns. */
export function clientRows(
  matrix: readonly MatrixClient[],
  versions: ReadonlyMap<string, string>,
  outcomes: ReadonlyMap<string, FileOutcome>,
  turns: readonly ContinuedTurnReport[],
): ClientRow[] {
  return matrix.map((entry) => {
    const ran = entry.files.map((f) => outcomes.get(f));
    const passed = ran.reduce((n, o) => n + (o?.passed ?? 0), 0);
    const failed = ran.reduce((n, o) => n + (o?.failed ?? 0), 0);
    const errors = ran.flatMap((o) => (o?.error ? [o.error] : []));
    const result = ran.some((o) => o === undefined) ? "not run" : failed > 0 || errors.length > 0 ? "fail" : "pass";
    const tests = errors.length > 0 ? errors.join("; ") : `${passed}/${passed + failed}`;
    const continued = turns.filter((t) => entry.files.includes(t.file)).map(formatTurn);
    return {
      client: entry.client,
      version: versions.get(entry.pkg) ?? "not installed",
      result,
      tests,
      continued: continued.length > 0 ? continued.join("; ") : "-",
    };
  });
}

const HEADER: Record<keyof ClientRow, string> = {
  client: "client",
  version: "version",
  result: "result",
  tests: "tests passed",
  continued: "continued turn: prefilled/prompt tokens",
};

/** A Markdown table, columns padded to their widest cell. */
export function formatTable(rows: readonly ClientRow[]): string {
  const columns = Object.keys(HEADER) as (keyof ClientRow)[];
  const cells = [HEADER, ...rows].map((row) => columns.map((c) => row[c]));
  const widths = columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => `| ${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const [head, ...body] = cells;
  const rule = `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`;
  return [line(head ?? []), rule, ...body.map(line)].join("\n");
}
