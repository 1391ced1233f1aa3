/**
 * The shell and code examples of README.md and docs/**\/*.md, as the docs-that-run tests see them
 * (test/unit/docs/doc-examples.test.ts, test/e2e/doc-examples.test.ts). A fenced block in a code
 * language is an example; it runs against the local stack unless the line before its fence is
 * `<!-- not-runnable: <reason> -->`. Data blocks (json, toml, text, diagrams) are not examples.
 * docs/bench/history/ is left out: its pages record past runs, commands as they were then.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "../../scripts/stack.ts";

/** How an example runs: `sh` with bash, `ts` with tsx. */
export type ExampleRunner = "sh" | "ts";

const RUNNERS: Record<string, ExampleRunner | "none"> = {
  sh: "sh",
  bash: "sh",
  shell: "sh",
  console: "sh",
  ts: "ts",
  typescript: "ts",
  js: "ts",
  javascript: "ts",
  mjs: "ts",
  // Code with no runner here: such a block must be marked not runnable.
  python: "none",
  py: "none",
  go: "none",
  rust: "none",
};

export interface DocExample {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  runner: ExampleRunner | "none";
  code: string;
  /** The reason given by `<!-- not-runnable: … -->`; undefined: the example runs. */
  notRunnable: string | undefined;
}

const MARKER = /^<!--\s*not-runnable:(.*?)-->\s*$/;
const FENCE = /^(\s*)(`{3,}|~{3,})([A-Za-z0-9_+-]*)\s*$/;

function markdownFiles(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(REPO_ROOT, path)).isDirectory()) return path === "docs/bench/history" ? [] : markdownFiles(path);
    return name.endsWith(".md") ? [path] : [];
  });
}

export function docExamples(): DocExample[] {
  const files = ["README.md", ...markdownFiles("docs")];
  return files.flatMap((file) => examplesIn(file, readFileSync(join(REPO_ROOT, file), "utf8")));
}

export function examplesIn(file: string, text: string): DocExample[] {
  const lines = text.split("\n");
  const out: DocExample[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] ?? "");
    if (!open) continue;
    const [, indent = "", fence = "", lang = ""] = open;
    let end = i + 1;
    while (end < lines.length && !(lines[end] ?? "").trim().startsWith(fence)) end++;
    const runner = RUNNERS[lang.toLowerCase()];
    if (runner !== undefined) {
      let before = i - 1;
      while (before >= 0 && (lines[before] ?? "").trim() === "") before--;
      const marker = MARKER.exec((lines[before] ?? "").trim());
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join("\n");
      out.push({ file: relative(".", file), line: i + 1, lang, runner, code, notRunnable: marker?.[1]?.trim() });
    }
    i = end;
  }
  return out;
}
