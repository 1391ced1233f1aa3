/** `npm run clients:latest`: its parsing of vitest's JSON and the tests' turn reports, and its table. */
import { describe, expect, it } from "vitest";
import { MATRIX, type MatrixClient, matrixFiles, matrixPackages } from "../../scripts/clients-latest/matrix.ts";
import { clientRows, formatTable, parseContinuedTurns, parseVitestJson } from "../../scripts/clients-latest/report.ts";

const vitestJson = JSON.stringify({
  numTotalTests: 4,
  testResults: [
    {
      name: "/repo/test/e2e/claude-code.test.ts",
      status: "passed",
      message: "",
      assertionResults: [{ title: "loop", status: "passed" }],
    },
    {
      name: "/repo/test/e2e/codex.test.ts",
      status: "failed",
      message: "",
      assertionResults: [
        { title: "a", status: "passed" },
        { title: "b", status: "failed" },
        { title: "c", status: "skipped" },
      ],
    },
    {
      name: "/repo/test/e2e/opencode.test.ts",
      status: "failed",
      message: "Error: Cannot find module 'x'\n    at stack",
      assertionResults: [],
    },
  ],
});

const matrix: MatrixClient[] = [
  { client: "Claude Code", pkg: "@anthropic-ai/claude-code", files: ["claude-code.test.ts"] },
  { client: "Codex CLI", pkg: "@openai/codex", files: ["codex.test.ts"] },
  { client: "opencode", pkg: "opencode-ai", files: ["opencode.test.ts"] },
  { client: "Qwen Code", pkg: "@qwen-code/qwen-code", files: ["qwen-code.test.ts"] },
];

describe("clients:latest parsing", () => {
  it("counts passed and failed tests per file and keeps a file-level error's first line", () => {
    const outcomes = parseVitestJson(vitestJson);
    expect(outcomes.get("claude-code.test.ts")).toEqual({ passed: 1, failed: 0 });
    expect(outcomes.get("codex.test.ts")).toEqual({ passed: 1, failed: 1 });
    expect(outcomes.get("opencode.test.ts")).toEqual({
      passed: 0,
      failed: 0,
      error: "Error: Cannot find module 'x'",
    });
    expect(outcomes.has("qwen-code.test.ts")).toBe(false);
  });

  it("reads the turn report's JSON lines, skipping blank and malformed ones", () => {
    const text = [
      '{"file":"codex.test.ts","turn":"exec tool results","prompt":24694,"prefilled":237}',
      "",
      "not json",
      '{"file":"codex.test.ts","turn":"x","prompt":"12","prefilled":1}',
      '{"file":"claude-code.test.ts","turn":"tool results","prompt":65071,"prefilled":123}',
    ].join("\n");
    expect(parseContinuedTurns(text)).toEqual([
      { file: "codex.test.ts", turn: "exec tool results", prompt: 24694, prefilled: 237 },
      { file: "claude-code.test.ts", turn: "tool results", prompt: 65071, prefilled: 123 },
    ]);
  });
});

describe("clients:latest table", () => {
  const versions = new Map([
    ["@anthropic-ai/claude-code", "2.1.332"],
    ["@openai/codex", "0.171.0"],
    ["opencode-ai", "1.18.33"],
  ]);
  const turns = [
    { file: "claude-code.test.ts", turn: "tool results", prompt: 65071, prefilled: 123 },
    { file: "codex.test.ts", turn: "exec tool results", prompt: 24694, prefilled: 237 },
    { file: "codex.test.ts", turn: "exec resume --last", prompt: 24785, prefilled: 41 },
  ];
  const rows = clientRows(matrix, versions, parseVitestJson(vitestJson), turns);

  it("gives each client pass, fail or not run, its version, and its continued turns", () => {
    expect(rows).toEqual([
      {
        client: "Claude Code",
        version: "2.1.332",
        result: "pass",
        tests: "1/1",
        continued: "tool results 123/65,071",
      },
      {
        client: "Codex CLI",
        version: "0.171.0",
        result: "fail",
        tests: "1/2",
        continued: "exec tool results 237/24,694; exec resume --last 41/24,785",
      },
      {
        client: "opencode",
        version: "1.18.33",
        result: "fail",
        tests: "Error: Cannot find module 'x'",
        continued: "-",
      },
      { client: "Qwen Code", version: "not installed", result: "not run", tests: "0/0", continued: "-" },
    ]);
  });

  it("prints an aligned Markdown table with a header and one line per client", () => {
    const lines = formatTable(rows).split("\n");
    expect(lines).toHaveLength(2 + rows.length);
    expect(lines[0]).toMatch(
      /^\| client +\| version +\| result +\| tests passed +\| continued turn: prefilled\/prompt tokens +\|$/,
    );
    expect(lines[1]).toMatch(/^\| -+ \| -+ \| -+ \| -+ \| -+ \|$/);
    expect(lines[2]).toMatch(/^\| Claude Code +\| 2\.1\.332 +\| pass +\| 1\/1 +\| tool results 123\/65,071 +\|$/);
    expect(new Set(lines.map((l) => l.length)).size).toBe(1);
  });
});

describe("clients:latest matrix", () => {
  it("installs each package once and runs each client e2e file once", () => {
    expect(matrixPackages()).toEqual([
      "@anthropic-ai/claude-code",
      "@anthropic-ai/sdk",
      "openai",
      "@openai/codex",
      "@qwen-code/qwen-code",
      "opencode-ai",
      "@openai/agents",
      "@google/gemini-cli",
      "@google/genai",
    ]);
    expect(matrixFiles()).toEqual([
      "claude-code.test.ts",
      "claude-code-tool-search.test.ts",
      "anthropic-sdk.test.ts",
      "openai-responses.test.ts",
      "openai-chat.test.ts",
      "responses-ws-sdk.test.ts",
      "codex.test.ts",
      "codex-compaction.test.ts",
      "codex-websocket.test.ts",
      "codex-default-model.test.ts",
      "qwen-code.test.ts",
      "opencode.test.ts",
      "agents-sdk-ws.test.ts",
      "gemini-cli.test.ts",
      "gemini-sdk.test.ts",
    ]);
    expect(MATRIX.every((c) => c.files.length > 0)).toBe(true);
  });
});
